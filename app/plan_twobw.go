package app

import (
	"context"
	"fmt"

	"pipeplan/app/request"
	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/partition"
)

// twoBWTransformerNoExport says why a 2BW plan of a transformer spec has no
// run plan.
const twoBWTransformerNoExport = "2BW plans of a transformer spec are not exported yet: the runner takes PTD-P's plans and the profile planners'"

// planTwoBWTransformer plans a transformer spec with PipeDream-2BW's planner
// (§3.3.2, Algorithm 1) over its layers as blocks (partition.TransformerBlocks):
// every (w, d) with w·d = N, microbatch size b and execution (no pipelining,
// 2BW, 2BW with recomputation), within the GPU's memory less the cost
// model's reserve. The request's pp fixes the depth d, its microbatch b and
// its recompute the execution ("none": without recomputation, "full": with
// it); the PTD-P-only choices are errors.
func planTwoBWTransformer(ctx context.Context, m ModelPreset, c hw.Cluster, in request.Plan, detailed bool) (Result, error) {
	if f, v := twoBWUnsupported(in); f != "" {
		return Result{}, &request.FieldError{Field: f, Msg: fmt.Sprintf("the 2BW planner runs tensor-parallel size 1, one chunk per GPU, no context or expert parallelism, no ZeRO and full or no recomputation; got %v", v)}
	}
	tr := *m.Transformer
	if tr.MTPLayers > 0 {
		return Result{}, &request.FieldError{Field: "plan.mtp_layers", Msg: fmt.Sprintf("the 2BW planner costs the layers alone, not multi-token prediction; %s trains with %d MTP modules (set mtp_layers 0, or plan with PTD-P)", m.Name, tr.MTPLayers)}
	}
	if in.PP > 0 && (c.GPUs()%in.PP != 0 || in.PP > tr.Layers) {
		return Result{}, &request.FieldError{Field: "plan.pp", Msg: fmt.Sprintf("the 2BW planner needs pp to divide the %d GPUs and at most one stage per layer (%d layers), got %d", c.GPUs(), tr.Layers, in.PP)}
	}
	res := Result{Model: m.Name, GPU: c.GPU.Name, GPUs: c.GPUs(), CapacityBytes: c.GPU.MemoryBytes,
		InterNodeBytesPerSec: c.Levels[len(c.Levels)-1].BandwidthBytesPerSec,
		Transformer:          &tr, Params: tr.Params(), Mode: "search", NoExport: twoBWTransformerNoExport}
	flash, note := flashFor(in.FlashAttention, c.GPU)
	res.Note = note
	blocks, err := partition.NewTransformerBlocks(tr, c.GPU, flash, cost.Options{})
	if err != nil {
		return Result{}, err
	}
	state, err := blocks.StateBytesPerWeightByte(in.Optimizer)
	if err != nil {
		return Result{}, &request.FieldError{Field: "plan.optimizer", Msg: err.Error()}
	}
	system := partition.SystemOf(c)
	found, err := partition.PlanTwoBW(ctx, blocks, partition.TwoBWOptions{
		GPUs: system.GPUs(), GPUsPerServer: system.GPUsPerServer(),
		IntraServerBandwidthBytesPerSec: system.IntraServerBandwidthBytesPerSec(),
		InterServerBandwidthBytesPerSec: system.InterServerBandwidthBytesPerSec(),
		MemoryBytes:                     c.GPU.MemoryBytes - cost.DefaultReserve(c.GPU.MemoryBytes),
		BatchSize:                       in.GlobalBatch, StateBytesPerWeightByte: state, MicrobatchSize: in.Microbatch,
	}, nil)
	if blocks.Err() != nil {
		return Result{}, blocks.Err()
	}
	if ctx.Err() != nil {
		return Result{}, ctx.Err()
	}
	if err != nil {
		res.Problem = err.Error()
		return res, nil
	}
	res.Evaluated = len(found)
	var shown []partition.Candidate
	for _, cand := range found {
		if !twoBWMatches(cand, in) {
			continue
		}
		res.Feasible++
		if len(shown) < in.Shown() {
			shown = append(shown, cand)
			row := fromCandidate(cand, c.GPU.MemoryBytes)
			row.Memory.ReserveBytes = cost.DefaultReserve(c.GPU.MemoryBytes)
			row.FLOPsPerIteration = tr.IterationFLOPs(in.GlobalBatch, cand.Execution.Recompute)
			row.TFLOPSPerGPU = row.FLOPsPerIteration / (float64(c.GPUs()) * row.IterationSeconds) / 1e12
			row.TokensPerSecond = row.SamplesPerSecond * float64(tr.Seq)
			modelFLOPs := tr.IterationFLOPs(in.GlobalBatch, model.RecomputeNone)
			row.ModelTFLOPSPerGPU = modelFLOPs / (float64(c.GPUs()) * row.IterationSeconds) / 1e12
			if peak, err := c.GPU.Peak(string(tr.TrainingPrecision())); err == nil {
				row.MFU = row.ModelTFLOPSPerGPU * 1e12 / peak
			}
			res.Candidates = append(res.Candidates, row)
		}
	}
	if len(shown) == 0 {
		res.Problem = fmt.Sprintf("2bw: no configuration with the fixed pp %d, microbatch %d and recompute %q fits in %.4g GiB less the reserve",
			in.PP, in.Microbatch, in.Recompute, c.GPU.MemoryBytes/(1<<30))
		return res, nil
	}
	res.Selected = min(max(in.Selected, 0), len(shown)-1)
	if !detailed {
		return res, nil
	}
	sel := shown[res.Selected]
	res.TimelineSVG, res.TimelineCaption, err = uniformTimeline(ctx, sel.Execution.Schedule, sel.Execution.PP, sel.Microbatches,
		sel.Predictions.BottleneckSeconds, "the pipeline's predicted time per microbatch at every stage")
	return res, err
}

// twoBWUnsupported names the first request field the 2BW planner cannot
// honour on a transformer spec, with its value ("" when none).
func twoBWUnsupported(in request.Plan) (string, any) {
	switch {
	case in.TP > 1:
		return "plan.tp", in.TP
	case in.Interleave > 1:
		return "plan.interleave", in.Interleave
	case in.CP > 1:
		return "plan.cp", in.CP
	case in.EP > 1:
		return "plan.ep", in.EP
	case in.ETP > 1:
		return "plan.etp", in.ETP
	case in.RecomputeLayers > 0:
		return "plan.recompute_layers", in.RecomputeLayers
	case in.RecomputeModules != "":
		return "plan.recompute_modules", in.RecomputeModules
	case in.ZeRO != nil && *in.ZeRO > 0:
		return "plan.zero", *in.ZeRO
	case in.SequenceParallel != nil && *in.SequenceParallel:
		return "plan.sequence_parallel", true
	case in.AllowCrossNodeTP:
		return "plan.allow_cross_node_tp", true
	case in.Schedule != "":
		return "plan.schedule", in.Schedule
	case in.Recompute == string(model.RecomputeSelective):
		return "plan.recompute", in.Recompute
	}
	return "", nil
}

// twoBWMatches reports whether a 2BW candidate has the request's fixed
// depth and recomputation.
func twoBWMatches(c partition.Candidate, in request.Plan) bool {
	if in.PP > 0 && c.Execution.PP != in.PP {
		return false
	}
	return in.Recompute == "" || string(c.Execution.Recompute) == in.Recompute
}
