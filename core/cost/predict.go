package cost

import (
	"math"

	"pipeplan/core/model"
)

// predict evaluates every pipeline stage and combines them (§4.2.2: a
// flushing schedule takes m·t_max plus the fill and drain, (p−1)/v stage
// times when balanced; PipeDream and 2BW do not flush; a V-shaped schedule
// is simulated, vPipelineSeconds). Without stages it
// leaves StageMemory nil.
func (e *evaluator) predict(stages bool) Prediction {
	pr := e.predictTime()
	if !stages {
		pr.Memory = e.peakMemory()
		return pr
	}
	pr.StageMemory = make([]Memory, e.cfg.PP)
	for i := range pr.StageMemory {
		pr.StageMemory[i] = e.memory(i)
	}
	pr.Memory = mostLoaded(pr.StageMemory)
	return pr
}

// predictTime is e's prediction but for its memory: the time, the
// throughput and the FLOPs.
func (e *evaluator) predictTime() Prediction {
	v, m := float64(e.chunks), float64(e.m)
	var tMax, tSum, dpMax, optMax float64
	var slow stageTime
	var slowZ, slowIdle float64
	for _, r := range e.runs { // a run's devices cost the same
		i := r.first
		st := e.deviceSeconds(i)
		z := e.zero3Seconds(i, st)
		ti := st.compute + st.tp + st.p2p + st.cp + st.ep + z
		idle := ti // what the device adds to the fill and drain
		if e.kind.WeightGradientFill {
			idle -= st.wgrad + math.Min(st.wgrad, st.fwd) // its W's fill the gaps
		}
		for range r.n {
			tSum += idle // added once per device, in order, as a loop over them would
		}
		if ti > tMax {
			tMax, slow, slowZ, slowIdle = ti, st, z, idle
		}
		dpMax = math.Max(dpMax, e.exposedDataParallel(i, st))
		optMax = math.Max(optMax, e.optimizerSeconds(i))
	}
	bubble := (tSum - slowIdle) / v
	if !e.kind.Flushes() {
		bubble = 0
	}
	if e.kind.VShaped {
		if step, ok := e.vPipelineSeconds(); ok {
			bubble = max(0, step-m*tMax) // the slowest device works m·tMax: what the step adds is its idle (rounding aside)
		} else {
			bubble = m * tMax * e.bubbleFraction // not reached: Validate bounds the simulation
		}
	}
	iter := m*tMax + bubble + dpMax + optMax

	B := float64(e.cfg.GlobalBatch)
	pr := Prediction{
		Params:                 e.memo.params[0],
		FLOPsPerIteration:      e.hardwareFLOPs(),
		ModelFLOPsPerIteration: e.memo.iterationFLOPs(e.cfg.GlobalBatch, model.RecomputeNone),
		Microbatches:           e.m,
		IterationSeconds:       iter,
		SamplesPerSec:          B / iter,
		TokensPerSec:           B * float64(e.tr.Seq) / iter,
		BubbleFraction:         e.bubbleFraction,
		Calibration:            e.memo.calibration,
		Time: TimeBreakdown{
			ComputeSeconds:         m * slow.compute,
			TensorParallelSeconds:  m * slow.tp,
			PipelineP2PSeconds:     m * slow.p2p,
			ContextParallelSeconds: m * slow.cp,
			ExpertParallelSeconds:  m * slow.ep,
			ZeRO3GatherSeconds:     m * slowZ,
			BubbleSeconds:          bubble,
			DataParallelSeconds:    dpMax,
			OptimizerSeconds:       optMax,
		},
	}
	n := float64(e.c.GPUs())
	pr.TFLOPSPerGPU = pr.FLOPsPerIteration / (n * iter) / 1e12
	pr.ModelTFLOPSPerGPU = pr.ModelFLOPsPerIteration / (n * iter) / 1e12
	pr.ActiveParams = e.memo.params[1]
	pr.MFU = pr.ModelFLOPsPerIteration / (n * iter * e.peak)
	if e.fp8Experts() {
		pr.Caveat = fp8ExpertsCaveat
	}
	return pr
}

// peakMemory is the memory of the most loaded pipeline device (the first
// of the most loaded): of each run of devices that cost the same,
// mostLoadedOf's.
func (e *evaluator) peakMemory() Memory {
	var peak Memory
	for _, r := range e.runs {
		if m := e.memory(e.mostLoadedOf(r)); r.first == 0 || m.PeakBytes > peak.PeakBytes {
			peak = m
		}
	}
	return peak
}

// mostLoadedOf returns the device of run r that stashes the most: its
// first, or in a V, whose stash never shrinks along the pipeline, its last
// (schedule.Kind.InFlight).
func (e *evaluator) mostLoadedOf(r stageRun) int {
	if e.kind.VShaped {
		return r.first + r.n - 1
	}
	return r.first
}

// mostLoaded is the first of stages with the largest peak.
func mostLoaded(stages []Memory) Memory {
	peak := stages[0]
	for _, m := range stages[1:] {
		if m.PeakBytes > peak.PeakBytes {
			peak = m
		}
	}
	return peak
}

// hardwareFLOPs returns the FLOPs one step computes, recomputation
// included (model.Transformer.IterationFLOPs); where only some layers
// recompute (evaluator.partial), the model FLOPs and those layers' forward
// passes once more; with selective recomputation's modules named, the
// model FLOPs and what they rerun (model.Transformer.RecomputeFwdFLOPs).
func (e *evaluator) hardwareFLOPs() float64 {
	B := e.cfg.GlobalBatch
	if e.cfg.Recompute == model.RecomputeSelective && e.cfg.RecomputeModules != "" {
		// The modules' forwards once more, layer by layer (those of a
		// kind alike; the multi-token prediction modules' layers of the
		// last layer's kind).
		f := e.memo.iterationFLOPs(B, model.RecomputeNone)
		for _, l := range e.tr.LayerOfEachKind() {
			n := float64(e.tr.MoELayers())
			if !e.tr.IsMoELayer(l) {
				n = float64(e.tr.Layers - e.tr.MoELayers())
			}
			if e.tr.IsMoELayer(l) == e.tr.IsMoELayer(e.tr.Layers-1) {
				n += float64(e.tr.MTPLayers)
			}
			f += n * e.tr.RecomputeFwdFLOPs(B, l, e.actOpts.Modules)
		}
		return f
	}
	if !e.partial {
		return e.memo.iterationFLOPs(B, e.cfg.Recompute)
	}
	f := e.memo.iterationFLOPs(B, model.RecomputeNone)
	var recomputed [2]float64 // the model's layers of each kind that recompute
	for i := range e.devWeights {
		for k := range recomputed {
			n, _ := e.layerMix(i, k)
			recomputed[k] += n
		}
	}
	for _, l := range e.tr.LayerOfEachKind() { // layers of a kind alike
		if n := recomputed[e.layerKind(l)]; n > 0 {
			f += n * e.tr.LayerFwdFLOPs(B, l)
		}
	}
	return f
}
