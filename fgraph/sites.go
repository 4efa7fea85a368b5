package fgraph

import "fmt"

// Site names one shared access or barrier of the port: the symbolic position
// a schedule refers to ("push.w3#2" is the second time a context hits it).
type Site uint16

// Sites, in alphabetical order of their names.
const (
	SiteNone Site = iota
	SiteCallDone
	SiteArchGate
	SiteDirect
	SiteEnterArray
	SiteEnterArrayCnt
	SiteEnterArrayUse
	SiteEnterBitmask
	SiteEnterCall
	SiteEnterCallRet
	SiteEnterDepthStore
	SiteEnterDepthLoad
	SiteEnterDirect
	SiteEnterDirectCall
	SiteEnterDirectGops
	SiteEnterFilter
	SiteEnterGen
	SiteEnterOutDepth
	SiteEnterOutDepthLoad
	SiteEnterOutRet
	SiteEnterOutRetLoad
	SiteEnterRestore
	SiteEnterSave
	SiteSetBitmap
	SiteGraphStop
	SiteLRU
	SitePopBarrier
	SitePopCurr
	SitePopDepth
	SitePopFunc
	SitePopOffset
	SitePopOverrun
	SitePopRet
	SitePushBarrier1
	SitePushBarrier2
	SitePushCheck
	SitePushCurr
	SitePushDead
	SitePushOverrun
	SitePushRetStack
	SitePushRmb
	SitePushW1
	SitePushW2
	SitePushW3
	SitePushW4
	SitePushW5Calltime
	SitePushW5Func
	SitePushW5Ret
	SitePushW5Retp
	SiteRecursion
	SiteRecursionUnlock
	SiteRegister
	SiteRegisterFinish
	SiteReserveBarrier
	SiteReserveCurr
	SiteReservePrev
	SiteReserveW1
	SiteReserveW2
	SiteReserveW3
	SiteRetArray
	SiteRetArrayUse
	SiteRetBarrier
	SiteRetBitmap
	SiteRetCall
	SiteRetCallRet
	SiteRetDepth
	SiteRetDepthLoad
	SiteRetDirect
	SiteRetDirectCall
	SiteRetDirectGops
	SiteRetGen
	SiteRetLower
	SiteRetrieveCurr
	SiteRetrieveWord
	SiteExitTask
	SiteInitTask
	SiteTaskVars
	SiteUnregister
	SiteUnregisterFinish
	SiteUnwindCurr
	SiteUnwindFunc
	SiteUnwindOffset
	SiteUnwindRet
	SiteUnwindRetp
	SiteUserIdx
	SiteUserPayload
	SiteUserPayloadLoad
	SiteReserveCall
	SiteRetrieveCall
	SiteOpStart
	SitePushW2Retp
	// SiteCOther is an access of a compiled core that no port site stands
	// for (ctarget names it by its source line).
	SiteCOther
	SiteTaskVar
	// Further uses of a plain load's value (Machine.reread): each has a
	// site of its own, so positions of the load's site stay the same.
	SitePushCurrUse
	SiteRecursionUse
	SiteReserveCurrUse
	SiteRetrieveWordUse
	SiteEnterBitmaskUse
	SiteUnwindCurrUse
	SiteUnwindRetUse
	SiteTaskVarUse
	SiteRetrieveCurrUse
	// SiteGetRetStackCall is a user's out-of-line call of
	// ftrace_graph_get_ret_stack() (the function profiler before v6.13).
	SiteGetRetStackCall
	numSites
)

var siteNames = [...]string{
	SiteNone:              "none",
	SiteCallDone:          "arch.call_done",
	SiteArchGate:          "arch.gate",
	SiteDirect:            "direct.switch",
	SiteEnterArray:        "enter.array",
	SiteEnterArrayCnt:     "enter.array_cnt",
	SiteEnterArrayUse:     "enter.array_use",
	SiteEnterBitmask:      "enter.bitmask",
	SiteEnterCall:         "enter.call",
	SiteEnterCallRet:      "enter.call_ret",
	SiteEnterDepthStore:   "enter.depth",
	SiteEnterDepthLoad:    "enter.depth_load",
	SiteEnterDirect:       "enter.direct",
	SiteEnterDirectCall:   "enter.direct_call",
	SiteEnterDirectGops:   "enter.direct_gops",
	SiteEnterFilter:       "enter.filter",
	SiteEnterGen:          "enter.gen",
	SiteEnterOutDepth:     "enter.out_depth",
	SiteEnterOutDepthLoad: "enter.out_depth_load",
	SiteEnterOutRet:       "enter.out_ret",
	SiteEnterOutRetLoad:   "enter.out_ret_load",
	SiteEnterRestore:      "enter.restore",
	SiteEnterSave:         "enter.save",
	SiteSetBitmap:         "enter.set_bitmap",
	SiteGraphStop:         "graph.stop",
	SiteLRU:               "lru",
	SitePopBarrier:        "pop.barrier",
	SitePopCurr:           "pop.curr",
	SitePopDepth:          "pop.depth",
	SitePopFunc:           "pop.func",
	SitePopOffset:         "pop.offset",
	SitePopOverrun:        "pop.overrun",
	SitePopRet:            "pop.ret",
	SitePushBarrier1:      "push.barrier1",
	SitePushBarrier2:      "push.barrier2",
	SitePushCheck:         "push.check",
	SitePushCurr:          "push.curr",
	SitePushDead:          "push.dead",
	SitePushOverrun:       "push.overrun",
	SitePushRetStack:      "push.ret_stack",
	SitePushRmb:           "push.rmb",
	SitePushW1:            "push.w1",
	SitePushW2:            "push.w2",
	SitePushW3:            "push.w3",
	SitePushW4:            "push.w4",
	SitePushW5Calltime:    "push.w5_calltime",
	SitePushW5Func:        "push.w5_func",
	SitePushW5Ret:         "push.w5_ret",
	SitePushW5Retp:        "push.w5_retp",
	SiteRecursion:         "recursion.lock",
	SiteRecursionUnlock:   "recursion.unlock",
	SiteRegister:          "register",
	SiteRegisterFinish:    "register.finish",
	SiteReserveBarrier:    "reserve.barrier",
	SiteReserveCurr:       "reserve.curr",
	SiteReservePrev:       "reserve.prev",
	SiteReserveW1:         "reserve.w1",
	SiteReserveW2:         "reserve.w2",
	SiteReserveW3:         "reserve.w3",
	SiteRetArray:          "ret.array",
	SiteRetArrayUse:       "ret.array_use",
	SiteRetBarrier:        "ret.barrier",
	SiteRetBitmap:         "ret.bitmap",
	SiteRetCall:           "ret.call",
	SiteRetCallRet:        "ret.call_ret",
	SiteRetDepth:          "ret.depth",
	SiteRetDepthLoad:      "ret.depth_load",
	SiteRetDirect:         "ret.direct",
	SiteRetDirectCall:     "ret.direct_call",
	SiteRetDirectGops:     "ret.direct_gops",
	SiteRetGen:            "ret.gen",
	SiteRetLower:          "ret.lower",
	SiteRetrieveCurr:      "retrieve.curr",
	SiteRetrieveWord:      "retrieve.word",
	SiteExitTask:          "task.exit",
	SiteInitTask:          "task.init",
	SiteTaskVars:          "task.vars",
	SiteUnregister:        "unregister",
	SiteUnregisterFinish:  "unregister.finish",
	SiteUnwindCurr:        "unwind.curr",
	SiteUnwindFunc:        "unwind.func",
	SiteUnwindOffset:      "unwind.offset",
	SiteUnwindRet:         "unwind.ret",
	SiteUnwindRetp:        "unwind.retp",
	SiteUserIdx:           "user.idx",
	SiteUserPayload:       "user.payload",
	SiteUserPayloadLoad:   "user.payload_load",
	SiteReserveCall:       "reserve.call",
	SiteRetrieveCall:      "retrieve.call",
	SiteOpStart:           "op.start",
	SitePushW2Retp:        "push.w2_retp",
	SiteCOther:            "c.other",
	SiteTaskVar:           "user.task_var",
	SitePushCurrUse:       "push.curr_use",
	SiteRecursionUse:      "recursion.lock_use",
	SiteReserveCurrUse:    "reserve.curr_use",
	SiteRetrieveWordUse:   "retrieve.word_use",
	SiteEnterBitmaskUse:   "enter.bitmask_use",
	SiteUnwindCurrUse:     "unwind.curr_use",
	SiteUnwindRetUse:      "unwind.ret_use",
	SiteTaskVarUse:        "user.task_var_use",
	SiteRetrieveCurrUse:   "retrieve.curr_use",
	SiteGetRetStackCall:   "get_ret_stack.call",
}

func (s Site) String() string {
	if int(s) < len(siteNames) {
		return siteNames[s]
	}
	return fmt.Sprintf("Site(%d)", s)
}

// ParseSite maps a site name back to the Site.
func ParseSite(name string) (Site, bool) {
	for i, n := range siteNames {
		if n == name && i != 0 {
			return Site(i), true
		}
	}
	return SiteNone, false
}

// NumSites is the number of sites (for per-site tables).
const NumSites = int(numSites)

// Sites returns every site except SiteNone.
func Sites() []Site {
	out := make([]Site, 0, NumSites-1)
	for s := Site(1); s < numSites; s++ {
		out = append(out, s)
	}
	return out
}
