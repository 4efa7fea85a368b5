package harness

import (
	"reflect"
	"testing"

	"github.com/fgcheck/fgcheck/model"
)

// freeSlot is the stub model.New puts in a slot that holds no user.
var freeSlot = model.Slot{User: -1}

// TestSlotFree holds slotFree, the field-by-field test the state's
// encoding and the call and return digests use, to the comparison with
// freeSlot it stands for, and fails if model.Slot gains a field slotFree
// does not look at.
func TestSlotFree(t *testing.T) {
	if n := reflect.TypeOf(model.Slot{}).NumField(); n != 4 {
		t.Fatalf("model.Slot has %d fields; slotFree compares 4: compare the new one too", n)
	}
	cases := []struct {
		sl     model.Slot
		reason string
	}{
		{freeSlot, "the stub model.New puts in every slot"},
		{model.Slot{}, "user 0 (User is 0, not -1)"},
		{model.Slot{User: -1, Gen: 1}, "a freed slot whose generation moved on"},
		{model.Slot{User: -1, Ready: true}, "the stub, ready"},
		{model.Slot{User: -1, Leaving: true}, "the stub, leaving"},
		{model.Slot{User: 2, Gen: 3, Ready: true}, "a registered user"},
	}
	for _, tc := range cases {
		sl := tc.sl
		if got, want := slotFree(&sl), sl == freeSlot; got != want {
			t.Errorf("%s: slotFree(%+v) = %v, want %v", tc.reason, sl, got, want)
		}
	}
}
