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
