package cost

import (
	"math/rand/v2"
	"testing"

	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
	"pipeplan/gpuprofiles"
	"pipeplan/modelprofiles"
)

// TestStageRunsCostTheSame checks what predictTime and peakMemory rely on
// when they evaluate one device of each stageRun: the runs cover every
// device once, in order, the end devices alone; every device of a run
// takes the same time per microbatch, ZeRO-3 gathers, exposed
// data-parallel time and optimizer step as the run's first, and needs no
// more memory than it. Random executions of models whose layers do not
// split evenly (Llama 3 405B's 126, DeepSeek-V3's 61 with three dense
// first) and of an even GPT, every schedule with a closed form.
func TestStageRunsCostTheSame(t *testing.T) {
	g, err := gpuprofiles.ByID("nvidia-h100-sxm5-80gb")
	if err != nil {
		t.Fatal(err)
	}
	c, err := hw.NewCluster(g, 8, 64, 0)
	if err != nil {
		t.Fatal(err)
	}
	even := gpt(24, 2048, 16)
	even.Name = "GPT 1.3B"
	models := []model.Transformer{even}
	for _, id := range []string{"llama3-405b", "deepseek-v3"} {
		tr, _, err := modelprofiles.Transformer(id)
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, tr)
	}
	rng := rand.New(rand.NewPCG(21, 5))
	pick := func(xs ...int) int { return xs[rng.IntN(len(xs))] }
	kinds := []schedule.Kind{schedule.OneFOneB, schedule.Interleaved, schedule.GPipe, schedule.TwoBW, schedule.PipeDream}
	for _, tr := range models {
		pred, err := NewPredictor(tr, c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		valid, shared := 0, 0
		for range 800 {
			ex := plan.Execution{TP: pick(1, 2, 8), PP: pick(2, 3, 5, 8, 16, 20), CP: pick(1, 2), EP: 1, MicrobatchSize: pick(1, 2),
				Interleave: 1, ZeRO: pick(0, 1, 2, 3), Schedule: kinds[rng.IntN(len(kinds))],
				Recompute:        []model.Recompute{model.RecomputeNone, model.RecomputeSelective, model.RecomputeFull}[rng.IntN(3)],
				SequenceParallel: rng.IntN(2) == 0, FlashAttention: true, UnfusedGradAccumulation: rng.IntN(2) == 0,
				Overlap: plan.Overlap{GradReduce: rng.IntN(2) == 0, ParamGather: rng.IntN(2) == 0}}
			if ex.Schedule == schedule.Interleaved {
				ex.Interleave = pick(1, 2, 3)
			}
			if tr.MoE != nil {
				ex.EP = pick(1, 8, 32)
			}
			ex.DP = max(1, c.GPUs()/(ex.TP*ex.PP*ex.CP))
			ex.GlobalBatch = ex.DP * ex.MicrobatchSize * pick(1, 2, 4, 16) * ex.PP
			e, err := evaluatorFor(pred, ex)
			if err != nil {
				continue
			}
			valid++
			next := 0
			for _, r := range e.runs {
				if r.first != next || r.n < 1 || ((r.first == 0 || r.first+r.n == ex.PP) && r.n != 1) {
					t.Fatalf("%s %+v: runs %v do not cover the devices in order, the ends alone", tr.Name, ex, e.runs)
				}
				next += r.n
				st := e.deviceSeconds(r.first)
				z, dp, opt := e.zero3Seconds(r.first, st), e.exposedDataParallel(r.first, st), e.optimizerSeconds(r.first)
				peak := e.memory(r.first).PeakBytes
				for j := r.first + 1; j < r.first+r.n; j++ {
					shared++
					sj := e.deviceSeconds(j)
					if sj != st || e.zero3Seconds(j, sj) != z || e.exposedDataParallel(j, sj) != dp || e.optimizerSeconds(j) != opt {
						t.Fatalf("%s %+v: device %d costs other than device %d of its run", tr.Name, ex, j, r.first)
					}
					if m := e.memory(j).PeakBytes; m > peak {
						t.Fatalf("%s %+v: device %d needs %.4g GB, more than the %.4g GB of device %d, the first of its run", tr.Name, ex, j, m/1e9, peak/1e9, r.first)
					}
				}
			}
			if next != ex.PP {
				t.Fatalf("%s %+v: runs %v cover %d of %d devices", tr.Name, ex, e.runs, next, ex.PP)
			}
		}
		if valid < 100 || shared < 1000 {
			t.Errorf("%s: %d valid executions, %d devices sharing a run: too few to check", tr.Name, valid, shared)
		}
		t.Logf("%s: %d valid executions, %d devices costed as another of their run", tr.Name, valid, shared)
	}
}
