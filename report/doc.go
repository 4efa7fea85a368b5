// Package report renders a traced replay (harness.TraceEvent) as one
// self-contained HTML page: a timeline of the nested contexts (task, IRQ,
// NMI, remote action) as indented, coloured lanes with every commit,
// barrier, order choice and drop, the interrupt entries and exits, the
// shadow-stack pictures (harness.Picture) taken before and after every
// interrupt and at the violation, and the violation highlighted (the element
// with id "violation", linked from the top of the page and scrolled into
// view when the page opens).
//
// The page has inline CSS and a few lines of inline JavaScript, no external
// assets; every string from the file (comments, names, messages) is escaped
// by html/template. Its bytes depend only on the Page. A size cap keeps the
// head of the trace and the part before the violation and says, in the page,
// what was left out.
//
// fgcheck replay FILE --html OUT.html writes it.
package report
