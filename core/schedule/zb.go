package schedule

import "fmt"

// zbH1 is the zero-bubble ZB-H1 schedule (Qi et al. 2023, §3.1): the
// backward splits into B (input gradient, action I) and W (weight
// gradient). Device r runs, whenever it is free, the first it can of: a
// forward, while fewer than p−r microbatches await their I (1F1B's
// warm-up) and fewer than p await their W (1F1B's peak memory); an I whose
// gradient has arrived; a pending W. W's thus fill what would be 1F1B's
// bubbles. The order is derived once with unit times T_F = T_B = T_W, then
// fixed like the paper's handcrafted schedule.
func zbH1(o Options) (*Schedule, error) {
	p, m := o.Stages, o.Microbatches
	s := newSchedule(ZBH1, o, p)
	// next[r] is the next microbatch of F, I and W on device r.
	next := make([][3]int, p)
	// fDone[r][k] / iDone[r][k]: the step at which device r finished F / I of k, or -1.
	fDone, iDone := make([][]int, p), make([][]int, p)
	for r := range p {
		fDone[r], iDone[r] = make([]int, m), make([]int, m)
		for k := range m {
			fDone[r][k], iDone[r][k] = -1, -1
		}
	}
	finished := func(at []int, k, t int) bool { return at[k] >= 0 && at[k] <= t }
	for t, left := 0, 3*p*m; left > 0; t++ {
		if t > 3*p*m+3*p {
			// Each step some device can move (the last one's I follows its F), so this is a bug.
			return nil, fmt.Errorf("zb-h1: order derivation stalled at step %d with %d actions left", t, left)
		}
		for r := range p {
			f, i, w := next[r][0], next[r][1], next[r][2]
			var a Action
			var j int // which of next[r] advances
			switch {
			case f < m && f-i < p-r && f-w < p && (r == 0 || finished(fDone[r-1], f, t)):
				a = act(r, Forward, f)
				fDone[r][f], j = t+1, 0
			case i < m && finished(fDone[r], i, t) && (r == p-1 || finished(iDone[r+1], i, t)):
				a = act(r, BackwardInput, i)
				iDone[r][i], j = t+1, 1
			case w < i && finished(iDone[r], w, t):
				a, j = act(r, BackwardWeight, w), 2
			default:
				continue
			}
			next[r][j]++
			s.Devices[r] = append(s.Devices[r], a)
			left--
		}
	}
	optSteps(s)
	return s, nil
}

// zbV is the zero-bubble V schedule (Qi et al. 2024, "Pipeline Parallelism
// with Controllable Memory", §4): each of the p devices holds two model
// chunks placed in a V — device r runs stages r and 2p−1−r — so a
// microbatch goes down the devices and back up, and its last stage runs
// on the device of its first. The backward splits into I and W as in
// ZB-H1. The order is torch.distributed.pipelining's
// ScheduleZBVZeroBubble (_calculate_single_rank_operations): device r
// warms up with 2(p−r)−1 forwards of its first chunk, then r pairs of
// forwards of its second and first chunks, then p−r rounds of its second
// chunk's F, I and W; the steady state alternates F, I, W of the first
// chunk with F, I, W of the second; the cool-down runs the remaining I's
// and then the W's. Like torch it derives the order for max(m, 2p−1)
// microbatches and drops the actions of those past m.
func zbV(o Options) (*Schedule, error) {
	p, m := o.Stages, o.Microbatches
	o.Chunks = VChunks
	s := newSchedule(ZBV, o, p)
	n := max(m, 2*p-1)
	const f, i, w = 0, 1, 2 // F, I and W, as indices of next
	kinds := [3]ActionKind{Forward, BackwardInput, BackwardWeight}
	for r := range p {
		var stage [VChunks]int
		stage[0], stage[1] = ZBVStages(p, r)
		// next[c][k]: the microbatch of chunk c's next action of kind k.
		var next [VChunks][3]int
		var list []Action
		run := func(c, k int) {
			if mb := next[c][k]; mb < m {
				list = append(list, act(stage[c], kinds[k], mb))
			}
			next[c][k]++
		}
		for range 2*(p-r) - 1 {
			run(0, f)
		}
		for range r {
			run(1, f)
			run(0, f)
		}
		for range p - r {
			run(1, f)
			run(1, i)
			run(1, w)
		}
		for next[1][f] < next[0][f] || next[0][f] < n {
			if next[0][f] < n {
				run(0, f)
			}
			run(0, i)
			run(0, w)
			run(1, f)
			run(1, i)
			run(1, w)
		}
		for range r {
			run(0, i)
			run(1, i)
		}
		for range p - r {
			run(0, i)
			run(0, w)
		}
		for _, c := range []int{1, 0} {
			for next[c][w] < next[c][i] {
				run(c, w)
			}
		}
		for c := range VChunks {
			if next[c] != [3]int{n, n, n} {
				// torch asserts the same counts; a miss is a bug here.
				return nil, fmt.Errorf("zb-v: device %d chunk %d ran %v forwards, input and weight gradients of %d microbatches", r, c, next[c], n)
			}
		}
		s.Devices[r] = list
	}
	optSteps(s)
	return s, nil
}

// ZBVStages returns the two stages device r of p runs under a V-shaped
// schedule (KindInfo.VShaped): r going down and 2p−1−r coming back up.
func ZBVStages(p, r int) (first, second int) { return r, 2*p - 1 - r }
