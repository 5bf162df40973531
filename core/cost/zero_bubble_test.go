package cost

import (
	"context"
	"math"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
	"pipeplan/modelprofiles"
)

// TestZBH1MatchesSimulator costs ZB-H1 plans and checks the pipeline part of
// the step (m × the slowest device's time plus the fill and drain, where
// each other device adds its time less its weight gradients W and less the
// smaller of W and its forward F, schedule.KindInfo.WeightGradientFill)
// against core/schedule's simulator running the generated ZB-H1 lists with
// each device's F, backward and W from the cost model: equal within 0.5 %
// for Llama 3 8B and 70B on 2 to 8 stages (the first and last stages
// unequal: the embedding, the output layer), with and without full
// recomputation; and ZB-H1 is faster than 1F1B with the same devices by
// what the W's fill. (A layer's W, the weight-gradient GEMMs, never exceeds
// its forward, which runs the same GEMMs, so min(W, F) is W here; the
// schedule package checks the other case, TestZBH1Bubble.)
func TestZBH1MatchesSimulator(t *testing.T) {
	const tolerance = 0.005
	for _, c := range []struct {
		preset string
		tp, pp int
		rc     model.Recompute
	}{
		{"llama3-8b", 1, 2, model.RecomputeNone}, {"llama3-8b", 1, 4, model.RecomputeFull},
		{"llama3-70b", 4, 4, model.RecomputeNone}, {"llama3-70b", 2, 8, model.RecomputeFull},
	} {
		tr, _, err := modelprofiles.Transformer(c.preset)
		if err != nil {
			t.Fatal(err)
		}
		gpus := c.tp * c.pp
		cl := servers(t, "nvidia-h100-sxm5-80gb", max(gpus, 8))
		for _, m := range []int{c.pp, 4 * c.pp} {
			ex := WithDefaults(plan.Execution{TP: c.tp, PP: c.pp, DP: max(1, 8/gpus), MicrobatchSize: 1, Recompute: c.rc,
				SequenceParallel: c.tp > 1, FlashAttention: true, Schedule: schedule.ZBH1})
			ex.GlobalBatch = ex.DP * m
			e, err := newEvaluator(tr, cl, ex, Options{})
			if err != nil {
				t.Fatalf("%s pp %d: %v", c.preset, c.pp, err)
			}
			pr := e.predict(false)
			pipe := pr.Time.ComputeSeconds + pr.Time.TensorParallelSeconds + pr.Time.PipelineP2PSeconds +
				pr.Time.ContextParallelSeconds + pr.Time.ExpertParallelSeconds + pr.Time.ZeRO3GatherSeconds + pr.Time.BubbleSeconds
			costs := schedule.Costs{Stages: make([]schedule.StageCost, c.pp)}
			var filled float64
			for i := range c.pp {
				st := e.deviceSeconds(i)
				total := st.compute + st.tp + st.p2p + st.cp + st.ep
				costs.Stages[i] = schedule.StageCost{FwdSeconds: st.fwd, BwdSeconds: total - st.fwd, WgradSeconds: st.wgrad}
				filled += st.wgrad + math.Min(st.wgrad, st.fwd)
			}
			s, err := schedule.Generate(schedule.ZBH1, schedule.Options{Stages: c.pp, Microbatches: m})
			if err != nil {
				t.Fatal(err)
			}
			tl, err := schedule.Simulate(context.Background(), s, costs, nil)
			if err != nil {
				t.Fatal(err)
			}
			rel := pipe/tl.StepSeconds - 1
			t.Logf("%s t%d p%d m%d %s: cost model %.4f s, simulator %.4f s (%+.2f%%)", c.preset, c.tp, c.pp, m, c.rc, pipe, tl.StepSeconds, 100*rel)
			if math.Abs(rel) > tolerance {
				t.Errorf("%s t%d p%d m%d %s: cost model %.4f s, simulator %.4f s", c.preset, c.tp, c.pp, m, c.rc, pipe, tl.StepSeconds)
			}
			ex.Schedule = schedule.OneFOneB
			one, err := newEvaluator(tr, cl, ex, Options{})
			if err != nil {
				t.Fatal(err)
			}
			saved := one.predict(false).Time.BubbleSeconds - pr.Time.BubbleSeconds
			if saved <= 0 || saved > filled {
				t.Errorf("%s p%d m%d: ZB-H1 saves %.4f s of 1F1B's fill and drain, want some of the %.4f s its W's could fill", c.preset, c.pp, m, saved, filled)
			}
		}
	}
}
