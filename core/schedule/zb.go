package schedule

import "fmt"

// zbH1 is the zero-bubble ZB-H1 schedule (Qi et al. 2023, §3.1): the
// backward splits into B (input gradient, action I) and W (weight
// gradient), and each device runs, whenever it is free, the first of: an I
// whose gradient has arrived, a forward while fewer than p microbatches hold
// activations (1F1B's peak), a pending W. The order is derived once with
// unit times T_F = T_B = T_W and then fixed, like the paper's handcrafted
// schedule; W's fill what would be the 1F1B cooldown bubble.
func zbH1(o Options) (*Schedule, error) {
	p, m := o.Stages, o.Microbatches
	s := newSchedule(ZBH1, o, p)
	type rank struct {
		nextF, nextI, nextW int // next microbatch of each kind
		held                int // forwards started whose W has not finished
	}
	ranks := make([]rank, p)
	// fDone[r][k] / iDone[r][k]: time step at which rank r finished F / I of k, or -1.
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
			// Each step some rank can move (the last rank's I follows its F), so this is a bug.
			return nil, fmt.Errorf("zb-h1: order derivation stalled at step %d with %d actions left", t, left)
		}
		for r := p - 1; r >= 0; r-- {
			rk := &ranks[r]
			var a Action
			switch {
			case rk.nextI < m && finished(fDone[r], rk.nextI, t) && (r == p-1 || finished(iDone[r+1], rk.nextI, t)):
				a = act(r, BackwardInput, rk.nextI)
				iDone[r][rk.nextI] = t + 1
				rk.nextI++
			case rk.nextF < m && rk.held < p && (r == 0 || finished(fDone[r-1], rk.nextF, t)):
				a = act(r, Forward, rk.nextF)
				fDone[r][rk.nextF] = t + 1
				rk.nextF++
				rk.held++
			case rk.nextW < rk.nextI && finished(iDone[r], rk.nextW, t):
				a = act(r, BackwardWeight, rk.nextW)
				rk.nextW++
				rk.held--
			default:
				continue
			}
			s.Devices[r] = append(s.Devices[r], a)
			left--
		}
	}
	optSteps(s)
	return s, nil
}
