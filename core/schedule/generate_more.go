package schedule

import "fmt"

// interleaved is Megatron's interleaved 1F1B (dissertation §4.2.2, Figure
// 4.4 bottom): device r holds chunks c = 0..v−1 as stages c·p + r; forward
// step k runs chunk (k/p) mod v on microbatch (k/(p·v))·p + k mod p, and
// backward steps walk the chunks in reverse; rank r warms up with
// 2(p−r−1) + (v−1)p forward steps. m must be a multiple of p.
func interleaved(o Options) (*Schedule, error) {
	p, v, m := o.Stages, o.Chunks, o.Microbatches
	if v < 2 {
		return nil, fmt.Errorf("chunks: interleaved needs v >= 2 (v = 1 is 1f1b), got %d", v)
	}
	if m%p != 0 {
		return nil, fmt.Errorf("microbatches: interleaved needs a multiple of stages (%d), got %d", p, m)
	}
	s := newSchedule(Interleaved, o, p)
	total := m * v
	step := func(r, k int, backward bool) Action {
		c := (k / p) % v
		mb := (k/(p*v))*p + k%p
		if backward {
			return act((v-1-c)*p+r, Backward, mb)
		}
		return act(c*p+r, Forward, mb)
	}
	for r := range p {
		warmup := min(2*(p-r-1)+(v-1)*p, total)
		list := make([]Action, 0, 2*total+v) // room for the flush's OPT_STEPs
		for k := range warmup {
			list = append(list, step(r, k, false))
		}
		for i := range total - warmup {
			list = append(list, step(r, warmup+i, false), step(r, i, true))
		}
		for k := total - warmup; k < total; k++ {
			list = append(list, step(r, k, true))
		}
		s.Devices[r] = list
	}
	optSteps(s)
	return s, nil
}

// oneFOneBRR is 1F1B-RR (dissertation §2.4.2): replica j of a stage with r
// replicas runs the inputs k with k mod r = j, keeping ⌈workers from this
// stage on / r⌉ inputs in flight (NOAM at the input stage).
func oneFOneBRR(o Options) (*Schedule, error) {
	reps := o.Replicas
	if reps == nil {
		reps = make([]int, o.Stages)
		for i := range reps {
			reps[i] = 1
		}
	}
	if len(reps) != o.Stages {
		return nil, fmt.Errorf("replicas: must have one entry per stage (%d), got %d", o.Stages, len(reps))
	}
	workers := 0
	for i, r := range reps {
		if r < 1 || r > 1024 {
			return nil, fmt.Errorf("replicas[%d]: must be in [1, 1024], got %d", i, r)
		}
		workers += r
	}
	s := newSchedule(OneFOneBRR, o, workers)
	s.Versioning = Stashed
	d, downstream := 0, workers
	for st, r := range reps {
		noam := (downstream + r - 1) / r
		for j := range r {
			var mbs []int
			for k := j; k < o.Microbatches; k += r {
				mbs = append(mbs, k)
			}
			s.Devices[d] = oneFOneB(st, mbs, noam-1, anyVersion)
			d++
		}
		downstream -= r
	}
	return s, nil
}
