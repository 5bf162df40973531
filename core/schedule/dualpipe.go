package schedule

import "fmt"

// dualPipeV makes DualPipeV, DeepSeek's DualPipe (DeepSeek-V3 technical
// report §3.2.1) cut in half: the V of ZB-V — device r runs stages r and
// 2p−1−r (ZBVStages) — fed from one end, its steady state pairing a
// forward of one chunk with a backward of the other. The order is
// torch.distributed.pipelining's ScheduleDualPipeV
// (_calculate_single_rank_operations, after deepseek-ai/DualPipe's
// dualpipev.py): device r warms up with 2(p−r−1) forwards of its first
// chunk, then r+1 pairs of forwards of both; p−r−1 rounds of the second
// chunk's I, W and F; m−2p+r+1 rounds of the main step (F0 with B1, F1
// with B0); p−r−1 rounds of B1, F1 with B0; then r+1 pairs of backwards
// of both chunks, the second half of them split into I and a W queued;
// p−r−1 rounds of a queued W and a first-chunk backward; the queued W's.
//
// An overlapped pair (torch's OVERLAP_F_B) is its forward and its whole
// backward in a row: the simulator runs one computation at a time on a
// device, as the pair's kernels share its SMs. What the pair hides — one
// microbatch's expert all-to-all behind the other's compute, DualPipe's
// purpose — is the engine's option (torchtitan's
// pipeline_parallel_expert_parallel_overlap), the cost model's
// plan.Overlap.EPComm. Like torch it needs m >= 2p.
func dualPipeV(o Options) (*Schedule, error) {
	p, m := o.Stages, o.Microbatches
	o.Chunks = VChunks
	s := newSchedule(DualPipeV, o, p)
	for r := range p {
		var stage [VChunks]int
		stage[0], stage[1] = ZBVStages(p, r)
		var forwards, backwards [VChunks]int // the next microbatch of each chunk
		var list, weights []Action           // weights: W's queued by I's, oldest first
		f := func(c int) {
			list = append(list, act(stage[c], Forward, forwards[c]))
			forwards[c]++
		}
		b := func(c int, split bool) {
			mb := backwards[c]
			backwards[c]++
			if !split {
				list = append(list, act(stage[c], Backward, mb))
				return
			}
			list = append(list, act(stage[c], BackwardInput, mb))
			weights = append(weights, act(stage[c], BackwardWeight, mb))
		}
		w := func() {
			if len(weights) > 0 {
				list = append(list, weights[0])
				weights = weights[1:]
			}
		}
		for range 2 * (p - r - 1) {
			f(0)
		}
		for range r + 1 {
			f(0)
			f(1)
		}
		for range p - r - 1 {
			b(1, true)
			w()
			f(1)
		}
		for range m - 2*p + r + 1 {
			f(0)
			b(1, false)
			f(1)
			b(0, false)
		}
		for range p - r - 1 {
			b(1, false)
			f(1)
			b(0, false)
		}
		split := false
		for i := range r + 1 {
			if i == (r+1)/2 && r%2 == 1 {
				split = true
			}
			b(1, split)
			if i == (r+1)/2 && r%2 == 0 {
				split = true
			}
			b(0, split)
		}
		for range p - r - 1 {
			w()
			b(0, split)
		}
		for len(weights) > 0 {
			w()
		}
		if forwards != [VChunks]int{m, m} || backwards != [VChunks]int{m, m} {
			// torch's counts; a miss is a bug here.
			return nil, fmt.Errorf("dualpipe-v: device %d ran forwards %v and backwards %v of %d microbatches", r, forwards, backwards, m)
		}
		s.Devices[r] = list
	}
	optSteps(s)
	return s, nil
}
