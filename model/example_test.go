package model_test

import (
	"fmt"

	"github.com/fgcheck/fgcheck/model"
)

// The model of two users and one task: a call both accept, then its return.
func Example() {
	c := model.Config{F: 3, StackWords: 512, TaskVars: true, Bit0: true}
	s := model.New(c, []model.User{{Name: "u0"}, {Name: "u3", DataWords: 2}}, 1)
	s.Register(0, 0)
	s.Register(1, 3)
	s.Start(0) // both users' call sites are live
	s.Start(1)
	r := s.Call(0, 1, 0x1004, 0x1000, 0x7ff0, 0)
	fmt.Println("pushed:", r.Pushed, "frame words:", s.Tasks[0].Words(c), "bits:", fmt.Sprintf("%#x", s.Tasks[0].Frames[0].Bits))
	ret, _ := s.Return(0)
	for _, call := range ret.Calls {
		fmt.Println("retfunc of user", call.User, "at index", call.Idx, "data words:", len(call.Data))
	}
	// Output:
	// pushed: true frame words: 7 bits: 0x9
	// retfunc of user 0 at index 0 data words: 0
	// retfunc of user 1 at index 3 data words: 2
}
