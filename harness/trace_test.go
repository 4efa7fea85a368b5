package harness

import (
	"testing"

	"github.com/fgcheck/fgcheck/fgraph"
)

// TestAddrNames: commits name the word they write by its kernel name.
func TestAddrNames(t *testing.T) {
	r, err := newRunner(small(1))
	if err != nil {
		t.Fatal(err)
	}
	b := r.m.TaskBase(0)
	cases := []struct {
		a    fgraph.Addr
		want string
		why  string
	}{
		{b + fgraph.TaskCurr, "task0 curr_ret_stack", "a task field"},
		{b + fgraph.TaskWords + 3, "task0 ret_stack[3]", "a shadow-stack word"},
		{fgraph.AddrArray + 3, "fgraph_array[3]", "an array element"},
		{fgraph.AddrBitmask, "fgraph_array_bitmask", "a variable"},
		{fgraph.AddrLRUNext, "fgraph_lru_next", "a variable after an array"},
		{fgraph.AddrSlotGen + 2, "slot generation[2]", "the gen-counter fix's array"},
		{fgraph.AddrOps + fgraph.OpsReady, "u0 ready", "a user's ops, by its name"},
	}
	for _, tc := range cases {
		if got := r.addrName(tc.a); got != tc.want {
			t.Errorf("addrName(%#x) = %q, want %q (%s)", int(tc.a), got, tc.want, tc.why)
		}
	}
}
