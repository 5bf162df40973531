package cost

import (
	"math/rand/v2"
	"testing"

	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/gpuprofiles"
	"pipeplan/modelprofiles"
)

// TestZeRO3LinkNotOversubscribed: ZeRO-3's weight all-gathers (two passes a
// microbatch) and its gradient reduce-scatters (one a microbatch) share
// the data-parallel link, so a step can take no less than their link
// time, however much compute hides them: m·(2·gather + reduce-scatter).
// Random ZeRO-3 executions of a dense and a mixture-of-experts model with
// every overlap on, one pipeline stage (the link time of device 0 is the
// step's), checked against that bound. Before the gathers and the
// reductions shared the link (each hidden behind the whole compute on its
// own), Llama 3 405B on 16,384 H100s with FSDP over 8,192 ranks predicted
// 5.1 s a step against 7.7 s of link time.
func TestZeRO3LinkNotOversubscribed(t *testing.T) {
	g, err := gpuprofiles.ByID("nvidia-h100-sxm5-80gb")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	pick := func(xs ...int) int { return xs[rng.IntN(len(xs))] }
	checked, bound := 0, 0
	for _, id := range []string{"llama3-405b", "llama3-8b", "qwen3-235b-a22b"} {
		tr, _, err := modelprofiles.Transformer(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, nodes := range []int{32, 2048} {
			c, err := hw.NewCluster(g, 8, nodes, 0)
			if err != nil {
				t.Fatal(err)
			}
			pred, err := NewPredictor(tr, c, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for range 60 {
				ex := plan.Execution{TP: pick(1, 2, 4, 8), PP: 1, CP: pick(1, 2, 4), EP: 1, Interleave: 1, MicrobatchSize: pick(1, 2), ZeRO: 3,
					Recompute:        []model.Recompute{model.RecomputeNone, model.RecomputeSelective, model.RecomputeFull}[rng.IntN(3)],
					SequenceParallel: true, FlashAttention: true, Overlap: plan.Overlap{GradReduce: true, ParamGather: true, TPComm: true}}
				if tr.MoE != nil {
					ex.EP = pick(8, 32)
				}
				ex.DP = c.GPUs() / (ex.TP * ex.CP)
				ex.GlobalBatch = ex.DP * ex.MicrobatchSize * pick(1, 2, 4)
				e, err := evaluatorFor(pred, ex)
				if err != nil {
					continue
				}
				reduce, _, _ := e.dataParallelSeconds(0)
				link := float64(e.m) * (2*e.zero3GatherSeconds(0) + reduce)
				iter := e.predictTime().IterationSeconds
				if iter < link*(1-1e-9) {
					t.Errorf("%s on %d GPUs %+v: a step of %.4g s, under the %.4g s its ZeRO-3 traffic keeps the link busy", tr.Name, c.GPUs(), ex, iter, link)
				}
				checked++
				if iter < 1.01*link {
					bound++ // the link, not the compute, sets the step
				}
			}
		}
	}
	if checked < 150 || bound == 0 {
		t.Errorf("%d executions checked, %d of them link-bound: too few to test the bound", checked, bound)
	}
	t.Logf("%d ZeRO-3 executions checked, %d link-bound", checked, bound)
}
