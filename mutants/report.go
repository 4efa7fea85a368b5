package mutants

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/fgcheck/fgcheck/fgraph"
)

// OK reports whether every non-control mutant was killed and no control
// was.
func (r *Report) OK() bool { return len(r.Problems()) == 0 }

// Problems lists the non-control mutants that survived and the controls
// that were flagged, one line each, in catalogue order.
func (r *Report) Problems() []string {
	var out []string
	for _, m := range r.Mutants {
		switch {
		case m.Control && m.Killed:
			out = append(out, fmt.Sprintf("control %s was flagged by %s (it must survive: %s): %s", m.Name, m.Oracle, m.Reason, m.Msg))
		case !m.Control && !m.Killed:
			out = append(out, fmt.Sprintf("mutant %s survived %d schedules", m.Name, m.Runs))
		}
	}
	return out
}

// verdict is the last column of the table.
func (m *Result) verdict() string {
	switch {
	case m.Control && m.Killed:
		return "FLAGGED (control)"
	case m.Control:
		return "ok (control survives)"
	case m.Killed:
		return "ok"
	}
	return "SURVIVED"
}

// Model is the mutant's verdict by compiler model: "killed under kbuild"
// (a run of kbuild's model, alias-aware as the kernel is built, fails),
// "killed only if the compiler can prove no alias" (only runs that need
// the no-alias model fail), or "survives".
func (m *Result) Model() string {
	switch {
	case m.KilledKbuild:
		return "killed under kbuild"
	case m.Killed:
		return "killed only if the compiler can prove no alias"
	}
	return "survives"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// millis formats seconds as milliseconds.
func millis(s float64) string {
	ms := s * 1000
	switch {
	case ms < 10:
		return fmt.Sprintf("%.2f ms", ms)
	case ms < 1000:
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.2f s", s)
}

// Table renders the report as an aligned text table: mutant, killed, the
// oracle, time and runs to the first kill (of the whole exploration for a
// survivor), the minimized schedule's lines, the verdict and the origin;
// then the score line.
func (r *Report) Table() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	cCol := r.hasC()
	head := "MUTANT\tKILLED\tCOMPILER MODEL\tORACLE\tTIME\tRUNS\tLINES\tVERDICT"
	if cCol {
		head += "\tON THE TREE (C)"
	}
	fmt.Fprintln(w, head+"\tORIGIN")
	for _, m := range r.Mutants {
		oracle, lines := m.Oracle, fmt.Sprint(m.ScheduleLines)
		if !m.Killed {
			oracle, lines = "-", "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s", m.Name, yesNo(m.Killed), m.Model(), oracle, millis(m.Seconds), m.Runs, lines, m.verdict())
		if cCol {
			fmt.Fprintf(w, "\t%s", m.cText())
		}
		fmt.Fprintf(w, "\t%s\n", m.Origin)
	}
	w.Flush()
	fmt.Fprintf(&b, "\nkilled %d of %d mutants (controls not counted) on %s, order %s: %s; %s\n", r.Killed, r.Total, r.Variant, r.Order, r.byModel(), r.killStats())
	for _, p := range r.Problems() {
		fmt.Fprintf(&b, "FAIL: %s\n", p)
	}
	return b.String()
}

// byModel says how many kills each compiler model makes.
func (r *Report) byModel() string {
	return fmt.Sprintf("%d under kbuild, %d only if the compiler can prove no alias", r.KilledKbuild, r.Killed-r.KilledKbuild)
}

// killStats summarizes the time to kill of the killed non-control mutants.
func (r *Report) killStats() string {
	med, worst, slow := r.TimeToKill()
	if slow == "" {
		return "no kills"
	}
	return fmt.Sprintf("time to kill: median %s, max %s (%s)", millis(med), millis(worst), slow)
}

// TimeToKill returns the median and the maximum seconds to the first kill
// over the killed non-control mutants, and the name of the slowest.
func (r *Report) TimeToKill() (median, worst float64, slowest string) {
	var ts []float64
	for _, m := range r.Mutants {
		if m.Control || !m.Killed {
			continue
		}
		ts = append(ts, m.Seconds)
		if m.Seconds >= worst {
			worst, slowest = m.Seconds, m.Name
		}
	}
	if len(ts) == 0 {
		return 0, 0, ""
	}
	slices.Sort(ts)
	n := len(ts)
	if n%2 == 1 {
		median = ts[n/2]
	} else {
		median = (ts[n/2-1] + ts[n/2]) / 2
	}
	return median, worst, slowest
}

// Markdown renders the report as a README-ready table, followed by the
// score line.
func (r *Report) Markdown() string {
	var b strings.Builder
	cCol := r.hasC()
	if cCol {
		b.WriteString("| mutant | origin | killed | compiler model | oracle | time to kill | runs to kill | minimized lines | on the tree (C) |\n")
		b.WriteString("|---|---|---|---|---|---:|---:|---:|---|\n")
	} else {
		b.WriteString("| mutant | origin | killed | compiler model | oracle | time to kill | runs to kill | minimized lines |\n")
		b.WriteString("|---|---|---|---|---|---:|---:|---:|\n")
	}
	for _, m := range r.Mutants {
		killed := yesNo(m.Killed)
		if m.Control {
			killed += " (control)"
		}
		oracle, lines := m.Oracle, fmt.Sprint(m.ScheduleLines)
		if !m.Killed {
			oracle, lines = "—", "—"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %d | %s |", m.Name, strings.ReplaceAll(m.Origin, "|", `\|`), killed, m.Model(), oracle, millis(m.Seconds), m.Runs, lines)
		if cCol {
			fmt.Fprintf(&b, " %s |", m.cText())
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nKilled %d of %d mutants (controls not counted) on %s, order %s: %s; %s.\n", r.Killed, r.Total, r.Variant, r.Order, r.byModel(), r.killStats())
	return b.String()
}

// jsonReport is the JSON shape of a report.
type jsonReport struct {
	Mutants      []jsonMutant `json:"mutants"`
	Killed       int          `json:"killed"`
	KilledKbuild int          `json:"killed_kbuild"`
	Total        int          `json:"total"`
}

type jsonMutant struct {
	Name          string  `json:"name"`
	Origin        string  `json:"origin"`
	Control       bool    `json:"control"`
	Killed        bool    `json:"killed"`
	KilledKbuild  bool    `json:"killed_kbuild"`
	Model         string  `json:"model"`
	Oracle        string  `json:"oracle"`
	Seconds       float64 `json:"seconds"`
	Runs          int64   `json:"runs"`
	SearchRuns    int64   `json:"search_runs"`
	ScheduleLines int     `json:"schedule_lines"`
	// C is the verdict on the compiled tree (fgcheck mutants --kernel).
	C *jsonC `json:"c,omitempty"`
}

type jsonC struct {
	Killed   bool    `json:"killed"`
	Oracle   string  `json:"oracle"`
	Seconds  float64 `json:"seconds"`
	Runs     int64   `json:"runs"`
	Complete bool    `json:"complete"`
}

// MarshalJSON encodes the report as
//
//	{"mutants":[{"name","origin","control","killed","killed_kbuild","model","oracle","seconds","runs","search_runs","schedule_lines"}],"killed","killed_kbuild","total"}
//
// with killed, killed_kbuild and total counting non-control mutants only;
// model is Result.Model ("killed under kbuild", "killed only if the
// compiler can prove no alias", "survives"); a survivor has oracle "" and
// schedule_lines 0.
func (r *Report) MarshalJSON() ([]byte, error) {
	j := jsonReport{Mutants: make([]jsonMutant, len(r.Mutants)), Killed: r.Killed, KilledKbuild: r.KilledKbuild, Total: r.Total}
	for i, m := range r.Mutants {
		j.Mutants[i] = jsonMutant{m.Name, m.Origin, m.Control, m.Killed, m.KilledKbuild, m.Model(), m.Oracle, m.Seconds, m.Runs, m.SearchRuns, m.ScheduleLines, nil}
		if c := m.C; c != nil {
			j.Mutants[i].C = &jsonC{c.Killed, c.Oracle, c.Seconds, c.Runs, c.Complete}
		}
	}
	return json.Marshal(j)
}

// story is the comment block of a minimized failing file.
func story(m Result, opt Options) []string {
	st := m.Stats
	lines := []string{
		fmt.Sprintf("%s: %s", m.Name, describe(m.Name)),
		"origin: " + m.Origin,
		fmt.Sprintf("breaks: %s: %s", m.Oracle, OneLine(st.Msg, 160)),
		fmt.Sprintf("found: fgcheck mutants, exhaustive std on %s, order %s: first violation after %d runs (%s)",
			opt.Variant, opt.Order, m.Runs, millis(m.Seconds)),
		fmt.Sprintf("minimized: %s -> %s (%d replays)", st.Before, st.After, st.Replays),
		"compiler model: " + m.Model(),
	}
	if m.Control {
		lines = append(lines, "this is a CONTROL: it must survive ("+m.Reason+")")
	}
	return lines
}

func describe(name string) string {
	mi, err := fgraph.LookupMutant(name)
	if err != nil {
		return ""
	}
	return mi.Desc
}

// OneLine folds a message (a model diff spans lines) into one comment line
// of at most max bytes (0: no limit), cut at a word boundary.
func OneLine(msg string, max int) string {
	s := strings.Join(strings.Fields(msg), " ")
	if max <= 0 || len(s) <= max {
		return s
	}
	cut := strings.LastIndexByte(s[:max], ' ')
	if cut <= 0 {
		cut = max
	}
	return s[:cut] + " ..."
}

func (r *Report) hasC() bool {
	for _, m := range r.Mutants {
		if m.C != nil {
			return true
		}
	}
	return false
}

// cText is the C column: the verdict on the compiled tree.
func (m *Result) cText() string {
	if m.C == nil {
		return "—"
	}
	return m.C.Text()
}

// Text says the verdict on the compiled tree in a few words.
func (c *CResult) Text() string {
	switch {
	case c.Killed:
		return fmt.Sprintf("killed by %s (%d runs, %s)", c.Oracle, c.Runs, millis(c.Seconds))
	case c.Complete:
		return fmt.Sprintf("survived %d schedules", c.Runs)
	}
	return fmt.Sprintf("survived %d schedules (incomplete)", c.Runs)
}
