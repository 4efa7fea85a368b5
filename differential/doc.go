// Package differential holds a port variant to the compiled tree it claims
// to be: it explores a scenario on the kernel target (a harness.Target),
// replays every schedule it ran on the port, and compares the two runs at
// every quiescent point (the shadow-stack words, curr_ret_stack, depth and
// overrun of every task, the callback log, and the answers of
// ftrace_graph_ret_addr() and ftrace_graph_get_ret_stack() for every live
// slot and depth) and, region by region, the stores each made: the same
// (address, value) pairs, in program order on the port and in the
// compiler's order on the C (a different order within a region is the
// compiler's right, reported apart, not a divergence). The first divergence
// names the C source line of the store and the port's site.
package differential
