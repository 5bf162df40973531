package cost

import (
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// MaxSimulatedStageMicrobatches bounds the pipeline a V-shaped schedule is
// costed on, p × min(m, VSteadyFrom(p)): its step is simulated
// (vPipelineSeconds), 3·2p·m actions; at the bound (128 stages × 512
// microbatches, about 0.4 million actions) generating and simulating take
// about 0.1 s and some tens of MB (BenchmarkZBV64x1024 in core/schedule).
const MaxSimulatedStageMicrobatches = 64 * 1024

// VSteadyFrom returns the microbatches up to which a V-shaped schedule of
// p stages is simulated whole. Past them vPipelineSeconds looks for its
// steady state, where each microbatch adds the slowest device's work
// (ZB-V's warm-up takes 2p − 1 forwards a device; the steady state is
// mostly reached by 4p, TestZBVExtrapolation), at VSteadyFrom(p) and
// twice, four times … as many microbatches, and extrapolates from the
// first it finds.
func VSteadyFrom(p int) int { return max(4*p, 8) }

// vPipelineSeconds returns the pipeline part of a step under a V-shaped
// schedule (zb-v): core/schedule's simulation of the schedule's action
// lists with each chunk's forward F, backward and weight gradient W; for
// more than VSteadyFrom(p) microbatches extrapolated from its steady state,
// or, where none is found within MaxSimulatedStageMicrobatches, from the
// last period simulated. No
// closed form holds once the chunks differ (the first device holds both
// the embedding and the output layer) or F ≠ I: the idle of ZB-V's fill
// and drain depends on the order of the actions, not on sums. Each chunk
// is costed as its own layers and ends (chunkSeconds); what the cost
// model keeps per device — the pipeline sends, an unfused gradient
// accumulation, ZeRO-3's exposed gathers — is shared evenly by the
// device's chunks, the sends and gathers in its backward. ok is false
// when the schedule cannot be generated or simulated, which Validate's
// bounds rule out.
func (e *evaluator) vPipelineSeconds() (step float64, ok bool) {
	p, costs := e.cfg.PP, e.chunkCosts()
	at := func(m int) (float64, error) {
		st, err := e.memo.stepper(e.cfg.Schedule, p, m)
		if err != nil {
			return 0, err
		}
		return st.StepSeconds(costs)
	}
	var busy float64 // the slowest device's work per microbatch
	for d := range p {
		a, b := schedule.ZBVStages(p, d)
		busy = max(busy, costs.Stages[a].FwdSeconds+costs.Stages[a].BwdSeconds+costs.Stages[b].FwdSeconds+costs.Stages[b].BwdSeconds)
	}
	for n := VSteadyFrom(p); ; n *= 2 {
		if e.m <= n {
			step, err := at(e.m)
			return step, err == nil
		}
		before, err := at(n - 1)
		if err != nil {
			return 0, false
		}
		after, err := at(n)
		if err != nil {
			return 0, false
		}
		// In the steady state the slowest device never waits: each
		// microbatch adds its work. Until then, twice the microbatches.
		if period := after - before; period >= busy*(1-1e-12) || p*2*n > MaxSimulatedStageMicrobatches {
			return after + float64(e.m-n)*period, true
		}
	}
}

// ChunkCosts returns each model chunk's forward, backward and weight
// gradient times under ex, in model order, as the cost model has them
// (chunkCosts): what core/schedule's simulator and timeline take as the
// plan's stage costs.
func (p *Predictor) ChunkCosts(ex plan.Execution) (schedule.Costs, error) {
	e, err := evaluatorFor(p, ex)
	if err != nil {
		return schedule.Costs{}, err
	}
	return e.chunkCosts(), nil
}

// chunkCosts returns the simulator's costs of each model chunk
// (vPipelineSeconds, ChunkCosts).
func (e *evaluator) chunkCosts() schedule.Costs {
	p := e.cfg.PP
	split := ExecutionLayers(e.tr, e.cfg)
	costs := schedule.Costs{Stages: make([]schedule.StageCost, len(split))}
	shared := make([]float64, p) // per device, what its chunks share
	for d := range p {
		st := e.deviceSeconds(d)
		shared[d] = (st.p2p + e.gradAccumulationSeconds(d) + e.zero3Seconds(d, st)) / float64(e.chunks)
	}
	start := 0
	for k, n := range split {
		st := e.chunkSeconds(start, n, k == 0, k == len(split)-1)
		start += n
		total := st.compute + st.tp + st.cp + st.ep + shared[e.kind.ChunkDevice(k, p)]
		costs.Stages[k] = schedule.StageCost{FwdSeconds: st.fwd, BwdSeconds: total - st.fwd, WgradSeconds: st.wgrad}
	}
	return costs
}

// chunkSeconds returns one model chunk's time per microbatch: its n layers
// from first (of which, where only some layers recompute, the first
// e.recomputeN do, layerMix), with the embedding when it is the model's
// first chunk and the output layer and any multi-token prediction modules
// when it is the last (addEnds).
func (e *evaluator) chunkSeconds(first, n int, isFirst, isLast bool) stageTime {
	var st stageTime
	for j := range n {
		k := e.layerKind(first + j)
		if e.partial && j >= e.recomputeN {
			st.addLayers(1, e.plainLayerTimes()[k])
		} else {
			st.addLayers(1, e.kindTime[k])
		}
	}
	if mtp := float64(e.tr.MTPLayers); mtp > 0 && isLast {
		k := e.layerKind(e.tr.Layers - 1) // each module's layer, of the last layer's kind, as layerMix counts it
		if e.partial {
			st.addLayers(mtp, e.plainLayerTimes()[k])
		} else {
			st.addLayers(mtp, e.kindTime[k])
		}
	}
	e.addEnds(&st, isFirst, isLast)
	return st
}

// Simulable reports whether a V-shaped schedule of p stages and m
// microbatches is within what the cost model simulates
// (MaxSimulatedStageMicrobatches).
func Simulable(p, m int) bool {
	return p*min(m, VSteadyFrom(p)) <= MaxSimulatedStageMicrobatches
}
