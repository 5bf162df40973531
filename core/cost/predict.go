package cost

import (
	"math"

	"pipeplan/core/model"
	"pipeplan/core/schedule"
)

// predict evaluates every pipeline stage and combines them (§4.2.2: a
// flushing schedule takes m·t_max plus the fill and drain, (p−1)/v stage
// times when balanced; PipeDream and 2BW do not flush).
func (e *evaluator) predict() Prediction {
	p, v, m := e.cfg.PP, float64(e.cfg.Interleave), float64(e.m)
	layerCompute, layerTP := e.layerSeconds()
	var tMax, tSum, dpMax, optMax float64
	var slow [4]float64
	for i := 0; i < p; i++ {
		c, tp, pp := e.deviceSeconds(i, layerCompute, layerTP)
		z := e.zero3Seconds(i)
		ti := c + tp + pp + z
		tSum += ti
		if ti > tMax {
			tMax, slow = ti, [4]float64{c, tp, pp, z}
		}
		dpMax = math.Max(dpMax, e.dataParallelSeconds(i))
		optMax = math.Max(optMax, e.optimizerSeconds(i))
	}
	bubble := (tSum - tMax) / v
	if e.cfg.Schedule == schedule.TwoBW || e.cfg.Schedule == schedule.PipeDream {
		bubble = 0
	}
	iter := m*tMax + bubble + dpMax + optMax

	B := float64(e.cfg.GlobalBatch)
	pr := Prediction{
		Params:                 e.tr.Params(),
		FLOPsPerIteration:      e.tr.IterationFLOPs(e.cfg.GlobalBatch, e.cfg.Recompute),
		ModelFLOPsPerIteration: e.tr.IterationFLOPs(e.cfg.GlobalBatch, model.RecomputeNone),
		Microbatches:           e.m,
		IterationSeconds:       iter,
		SamplesPerSec:          B / iter,
		TokensPerSec:           B * float64(e.tr.Seq) / iter,
		BubbleFraction:         BubbleFraction(e.cfg.Schedule, p, e.m, e.cfg.Interleave),
		Time: TimeBreakdown{
			ComputeSeconds:        m * slow[0],
			TensorParallelSeconds: m * slow[1],
			PipelineP2PSeconds:    m * slow[2],
			ZeRO3GatherSeconds:    m * slow[3],
			BubbleSeconds:         bubble,
			DataParallelSeconds:   dpMax,
			OptimizerSeconds:      optMax,
		},
	}
	n := float64(e.c.GPUs())
	pr.TFLOPSPerGPU = pr.FLOPsPerIteration / (n * iter) / 1e12
	pr.MFU = pr.ModelFLOPsPerIteration / (n * iter * e.peak)
	pr.StageMemory = make([]Memory, p)
	for i := range pr.StageMemory {
		pr.StageMemory[i] = e.memory(i)
		if i == 0 || pr.StageMemory[i].PeakBytes > pr.Memory.PeakBytes {
			pr.Memory = pr.StageMemory[i]
		}
	}
	return pr
}
