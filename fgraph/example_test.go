package fgraph_test

import (
	"fmt"

	"github.com/fgcheck/fgcheck/fgraph"
)

// Register one user that reserves 8 bytes per frame, call a traced
// function on task 0 and print its shadow stack: the frame (ret, func,
// retp), the BITMAP word, the payload and the DATA word above it.
func Example() {
	m := fgraph.MustMachine(fgraph.DefaultConfig(fgraph.Latest))
	u := m.AddOps(&fgraph.Ops{Name: "demo", DataBytes: 8})
	fmt.Println("index:", m.RegisterFtraceGraph(u))

	fmt.Println("hijacked:", m.Call(1, false))
	im := m.Snapshot(0)
	for i := 0; i < im.Curr; i++ {
		fmt.Printf("%2d 0x%016x\n", i, im.Words[i])
	}
	fmt.Println("curr_ret_stack:", im.Curr)
	fmt.Printf("bitmap word: type %d offset %d users %#b\n",
		fgraph.GetType(im.Words[3]), fgraph.GetFrameOffset(im.Words[3]), fgraph.GetBitmapBits(im.Words[3]))
	fmt.Printf("data word: type %d offset %d owner %d words %d\n",
		fgraph.GetType(im.Words[5]), fgraph.GetFrameOffset(im.Words[5]),
		fgraph.GetDataIndex(im.Words[5]), fgraph.GetDataSize(im.Words[5]))

	got, want := m.Return()
	fmt.Printf("returned to %#x (caller pushed %#x), curr_ret_stack %d\n", got, want, m.Snapshot(0).Curr)
	// Output:
	// index: 0
	// hijacked: true
	//  0 0xffffffff82000004
	//  1 0xffffffff82000100
	//  2 0xffffc90000000000
	//  3 0x0000000000001403
	//  4 0xda00010001000000
	//  5 0x0000000000000805
	// curr_ret_stack: 6
	// bitmap word: type 1 offset 3 users 0b1
	// data word: type 2 offset 5 owner 0 words 1
	// returned to 0xffffffff82000004 (caller pushed 0xffffffff82000004), curr_ret_stack 0
}
