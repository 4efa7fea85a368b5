package harness

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fgcheck/fgcheck/fgraph"
)

// KnownFinding is a violation of a real kernel variant's faithful port: a
// finding about the kernel, excused by a narrow allowance (that variant, that
// oracle, that message) and reported separately. docs/findings.md has each
// one's trace, consequence and fix variant. Strict mode turns them off.
type KnownFinding struct {
	Name     string
	Variants []fgraph.Variant
	Oracle   string
	// Also lists further oracles the same window can trip.
	Also []string
	// Match is the narrow allowance.
	Match func(r *runner, v Violation) bool
	Fix   string // the fix variant that passes strictly
	Desc  string
}

// KnownFindings is the list, in the order docs/findings.md presents them.
var KnownFindings = []KnownFinding{
	{
		Name: "F1-bit0", Variants: []fgraph.Variant{fgraph.Latest, fgraph.V612, fgraph.V611, fgraph.Seed}, Oracle: OracleCallback, Fix: "no-bit0",
		Desc: "BIT(0) is set in every bitmap word, so the user at index 0 gets retfuncs (with no data) for frames it never accepted",
		Match: func(r *runner, v Violation) bool {
			return !r.cfg.NoBit0 && strings.Contains(v.Msg, "(idx 0) ran for func") && strings.Contains(v.Msg, "whose entry it never accepted")
		},
	},
	{
		Name: "F3-torn-return", Variants: []fgraph.Variant{fgraph.V611, fgraph.Seed}, Oracle: OracleCallback, Fix: "latest (d65474033740)",
		Desc: "the return loop loads fgraph_array[i] plainly; the compiler may load it again after the stub check, so an unregister in between sends the call to the stub's retfunc",
		Match: func(r *runner, v Violation) bool {
			return !r.cfg.Mutants.Has(fgraph.MF3) && strings.HasPrefix(v.Msg, "return callback reached &fgraph_stub through a re-read")
		},
	},
	{
		Name: "F2-seed-torn-entry", Variants: []fgraph.Variant{fgraph.Seed}, Oracle: OracleCallback, Fix: "v6.11 (63a8dfb88911)",
		Desc: "the seed's entry loop loads fgraph_array[i] plainly; a re-load after the stub check can reach the stub's entryfunc (harmless there: no filter test in the seed)",
		Match: func(r *runner, v Violation) bool {
			return strings.HasPrefix(v.Msg, "entry callback reached &fgraph_stub through a re-read")
		},
	},
	{
		Name: "F9-direct-off", Variants: []fgraph.Variant{fgraph.V611}, Oracle: OracleModel, Fix: "latest (53b2fae90ff0)",
		Desc: "ftrace_graph_enable_direct(true) turns the static key off, so after two users drop to one direct mode never comes back",
		Match: func(r *runner, v Violation) bool {
			return !r.cfg.Mutants.Has(fgraph.MF9) && strings.HasPrefix(v.Msg, "one user registered but direct mode is off")
		},
	},
	{
		Name: "F10-entry-for-all", Variants: []fgraph.Variant{fgraph.V611}, Oracle: OracleModel, Fix: "latest (f4ff9f646a4d)",
		Desc: "on an architecture whose graph entry fires for every function, v6.11's direct mode calls the single user's entryfunc without its filter, so functions outside the filter are traced",
		Match: func(r *runner, v Violation) bool {
			return r.cfg.EntryForAll && !r.cfg.Mutants.Has(fgraph.MF10) && strings.Contains(v.Msg, "kernel hijacked=true, model pushed=false (traced=false")
		},
	},
	{
		Name: "direct-switch-race", Variants: []fgraph.Variant{fgraph.Latest, fgraph.V612, fgraph.V611}, Oracle: OracleModel, Also: []string{OracleCallback}, Fix: "direct-fallback",
		Desc:  "a register or unregister on another CPU switches direct mode (static key, static calls, fgraph_direct_gops) while this CPU is between testing the key and calling through fgraph_direct_gops: the entry or return reaches the stub and the single user misses that callback",
		Match: func(r *runner, v Violation) bool { return r.directRace },
	},
	{
		Name: "F6-seed-reuse", Variants: []fgraph.Variant{fgraph.Seed}, Oracle: OracleCallback, Fix: "gen-counter",
		Desc: "the seed hands out the lowest free index, so a new user immediately inherits retfuncs for frames pushed for the old one",
		Match: func(r *runner, v Violation) bool {
			return !r.cfg.GenCounter && strings.Contains(v.Msg, "in another registration")
		},
	},
	{
		Name: "reserve-window", Variants: []fgraph.Variant{fgraph.Latest, fgraph.V612, fgraph.V611}, Oracle: OracleUnwinder, Also: []string{OraclePanic, OracleRetAddr, OracleCallback}, Fix: "reserve-irqoff",
		Desc: "fgraph_reserve_data writes the DATA word, then raises curr_ret_stack, then rewrites the word; an interrupt that pushes a frame before the raise can overwrite the word, and until the rewrite an unwinder reads the interrupt's leftover as the top meta word",
		// That window (raised, rewrite pending), that word (the DATA word
		// an interrupt overwrote) and that reader (a stack walk that
		// reached it): with the word as reserve.w1 wrote it, the same
		// reader finds nothing. (Words reserve-reorder left wrong are
		// restored too: two known findings on one walk are still known.)
		// A callback's own read (the profiler's, retrieve-data's) is
		// judged after it returns: callbackReader noted whether it read
		// the clobbered word.
		Match: func(r *runner, v Violation) bool {
			if (v.Reader == ReaderProfiler || v.Reader == ReaderRetrieve) && len(r.ctxs) > 0 && r.top().windowRead {
				return true
			}
			return r.inReserveWindow && r.passesWith(r.openFindingFixes())
		},
	},
	{
		Name: "inflight-ret-addr", Variants: []fgraph.Variant{fgraph.Latest, fgraph.V612, fgraph.V611, fgraph.Seed}, Oracle: OracleRetAddr, Fix: "retp-guard",
		Desc: "between the raise of curr_ret_stack (W3) and the rewrite of the frame fields (W5) ftrace_graph_ret_addr trusts the new frame: its retp can be a live hijacked slot (left by a discarded tail-call frame, or rewritten before ret by the compiler) while its ret is still an interrupt's, so the unwinder gets the interrupt's return address for that slot",
		// That window (W3 committed, W5 pending), that frame and that
		// reader (ftrace_graph_ret_addr matched the in-flight frame): with
		// the frame's fields as W5 will write them, the walk is right.
		// (Words the reserve findings left wrong are restored too.)
		Match: func(r *runner, v Violation) bool {
			return r.staleRetp && r.passesWith(r.openFindingFixes())
		},
	},
	{
		Name: "reserve-reorder", Variants: []fgraph.Variant{fgraph.Latest, fgraph.V612, fgraph.V611}, Oracle: OracleUnwinder, Also: []string{OraclePanic, OracleRetAddr, OracleModel, OracleCallback, OracleTransparency, OracleCapacity}, Fix: "reserve-irqoff (or the alias option)",
		Desc: "no barrier separates the raise of curr_ret_stack from the rewrite of the DATA word in fgraph_reserve_data; without alias knowledge the compiler may emit the rewrite first, so an interrupt's overwrite of the DATA word survives for the life of the frame (depends on alias analysis)",
		Match: func(r *runner, v Violation) bool {
			if !v.AliasDependent {
				return false
			}
			o := r.orders.sites[fgraph.SiteReserveW2]
			w2, w3 := -1, -1
			for i, s := range o {
				switch s {
				case fgraph.SiteReserveW2:
					w2 = i
				case fgraph.SiteReserveW3:
					w3 = i
				}
			}
			// That order, that word (the DATA word the interrupt's
			// leftover stays in, still wrong) and, for a stack walk or the
			// model oracle, nothing else: with the word right the same
			// check passes. Once the frame has returned over the wrong word
			// (its pop took the leftover for the frame's meta word), the
			// damage is in curr_ret_stack itself and the allowance holds
			// for the rest of the run.
			if w3 < 0 || w2 <= w3 || !r.clobbered {
				return false
			}
			if r.clobberSpread {
				return true
			}
			if len(r.wrongClobbered()) == 0 {
				return false
			}
			fixes := r.openFindingFixes()
			switch {
			case r.rd.on:
				return r.passesWith(fixes)
			case v.Oracle == OracleModel:
				return r.modelPassesWith(fixes)
			}
			return true
		},
	},
	{
		Name: "recursion-transition", Variants: []fgraph.Variant{fgraph.Latest, fgraph.V612, fgraph.V611, fgraph.Seed}, Oracle: OracleCallback, Fix: "no-transition",
		Desc: "ftrace_test_recursion_trylock() lets one nested call in the same context through on TRACE_CTX_TRANSITION, so an entryfunc that calls a traced function is re-entered once (the next nesting is refused)",
		Match: func(r *runner, v Violation) bool {
			return !r.cfg.NoTransition && !r.cfg.Mutants.Has(fgraph.MF14) && strings.HasSuffix(v.Msg, ": nested call 1, let through on TRACE_CTX_TRANSITION")
		},
	},
	{
		Name: "seed-ret-addr-current", Variants: []fgraph.Variant{fgraph.Seed}, Oracle: OraclePanic, Fix: "v6.11 (Petr Pavlu, function_graph: Fix the ret_stack used by ftrace_graph_ret_addr(), Aug 2024)",
		Desc: "the seed's ftrace_graph_ret_addr(task, ...) starts at task->curr_ret_stack but walks current's words; an unwinder on another CPU (livepatch's reliable unwind of a sleeping task) reads its own task's stack (a NULL dereference when that is NULL)",
		Match: func(r *runner, v Violation) bool {
			return strings.Contains(v.Msg, "the seed walks current->ret_stack, and current is not the unwound task")
		},
	},
	{
		Name: "seed-tail-call", Variants: []fgraph.Variant{fgraph.Seed}, Oracle: OracleRetAddr, Fix: "v6.11 (375bb57292f4)",
		Desc: "the seed's ftrace_graph_ret_addr has no tail-call clause: for traced A tail-calling traced B it returns B's recorded ret, return_to_handler, instead of A's caller",
		Match: func(r *runner, v Violation) bool {
			return strings.Contains(v.Msg, seedTailCallMsg)
		},
	},
}

// seedTailCallMsg is what the ret-addr oracle's message holds when
// ftrace_graph_ret_addr returned return_to_handler (seed-tail-call's
// matcher; formatted once, not at every match).
var seedTailCallMsg = fmt.Sprintf(") = %#x, want", fgraph.ReturnToHandler)

// knownTable is KnownFindings for known(): the allowances re-run oracles
// (readers.go), which report through known(), so the list cannot name
// itself in its own initializer.
var knownTable []KnownFinding

func init() { knownTable = KnownFindings }

// knownCandidates lists, for each oracle (in Oracles' order), the known
// findings of variant v that the oracle can report, in knownTable's
// order: known tries only those. (Testing every finding's oracles and
// variants for every report was 0.6 % of peer-spin K=3's instructions.)
func knownCandidates(v fgraph.Variant) [][]*KnownFinding {
	by := make([][]*KnownFinding, len(Oracles))
	for i := range knownTable {
		k := &knownTable[i]
		if !slices.Contains(k.Variants, v) {
			continue
		}
		for o, name := range Oracles {
			if k.Oracle == name || slices.Contains(k.Also, name) {
				by[o] = append(by[o], k)
			}
		}
	}
	return by
}

// known returns the name of the known finding v is, or "": the first of
// the candidates of v's oracle whose allowance matches.
func (r *runner) known(v Violation) string {
	o, ok := oracleIndex[v.Oracle]
	if !ok {
		internalf("a report of %q, which is not one of the oracles", v.Oracle)
	}
	for _, k := range r.knownFor[o] {
		if k.Match(r, v) {
			return k.Name
		}
	}
	return ""
}
