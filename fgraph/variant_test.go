package fgraph

import "testing"

// TestV611IsTheRelease pins what the v6.11 variant is: the v6.11 release,
// i.e. the series tip fe835e3ca40e plus the fixes of the v6.11-rc cycle, and
// none of the later ones. In-cycle fixes present: F4's publish after
// ftrace_startup_subops() (Sep 2024) and Petr Pavlu's ftrace_graph_ret_addr()
// walking the task's own words (Aug 2024; TestRetAddrWalksWhoseWords). Later
// fixes absent: static_branch_disable when users drop to one (F9 open until
// 53b2fae90ff0), no FTRACE_OPS_FL_GRAPH WARN (Jul 2025), no return-side
// recursion lock (0db0934e7f9b; TestReturnRecursionLock), calltime still in
// the frame (F = 4 until 66611c047570).
func TestV611IsTheRelease(t *testing.T) {
	c := DefaultConfig(V611)
	if c.FrameWords != 4 {
		t.Errorf("F = %d, want 4 (calltime in the frame)", c.FrameWords)
	}
	m := MustMachine(c)
	a := m.AddOps(&Ops{Name: "a"})
	b := m.AddOps(&Ops{Name: "b"})
	mustRegister(t, m, a, 0)
	i := m.RegisterBegin(b)
	if m.Mem[AddrArray+Addr(i)] != HandleStub {
		t.Errorf("fgraph_array[%d] published before ftrace_startup_subops (the F4 fix is in v6.11)", i)
	}
	m.RegisterFinish(b)
	if m.Mem[AddrArray+Addr(i)] != OpsHandle(b.k) {
		t.Errorf("fgraph_array[%d] not published after startup", i)
	}
	m.UnregisterFtraceGraph(b)
	if m.Mem[AddrDoDirect] != 0 {
		t.Errorf("direct mode came back after dropping to one user: that is 53b2fae90ff0 (Feb 2026), not v6.11")
	}
	if got := m.RegisterFtraceGraph(a); got != ENOSPC || hasWarning(m, "WARN_ONCE: function graph ops registered again") {
		t.Errorf("second register %d: the FTRACE_OPS_FL_GRAPH WARN is Jul 2025, not v6.11", got)
	}
}
