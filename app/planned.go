package app

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"pipeplan/gpuprofiles"

	"pipeplan/app/request"
)

// PlannedJob returns a Cluster-page job for the Plan page's inputs p: its
// label names the model, its throughputs come from the planner, and its
// scale factor is the smallest power of two GPUs (up to
// request.MaxClusterGPUs, spanning servers of p's size beyond one) at
// which the model fits on one of the worker types (nil: Gavel's).
func PlannedJob(ctx context.Context, p request.Plan, types []string) (request.Job, error) {
	if err := p.Validate(); err != nil {
		return request.Job{}, err
	}
	if types == nil {
		types = request.WorkerTypes(request.WorkloadJobTypes)
	}
	m, err := modelFor(p)
	if err != nil {
		return request.Job{}, err
	}
	snap := p
	snap.Selected = 0
	job := request.Job{Type: "planned: " + m.Name, Weight: 1, Planned: &snap}
	for scale := 1; scale <= request.MaxClusterGPUs; scale *= 2 {
		if _, perr := request.PlannedServers(scale, snap.GPUsPerNode); perr != nil {
			continue
		}
		job.Scale = scale
		if _, _, err = plannedThroughputs(ctx, snap, scale, types); err == nil {
			return job, nil
		}
		if ctx.Err() != nil {
			return request.Job{}, ctx.Err()
		}
	}
	return request.Job{}, fmt.Errorf("%s: %w", job.Type, err)
}

// PlannedThroughputs is a planned job's row of Gavel's throughput matrix T
// (the planner side of it, DESIGN.md): its steps/s on each worker type, and
// with its GPUs on separate servers (§5.3.1), each with where it came from.
type PlannedThroughputs struct {
	// WorkerTypes label the columns (Gavel's names or gpus.json ids).
	WorkerTypes []string `json:"worker_types"`
	// ScaleFactor is the job's GPU count.
	ScaleFactor int `json:"scale_factor"`
	// StepsPerSecond[j] is the job's throughput on worker type j with its
	// GPUs on one server; 0 where it does not fit, Sources[j] says why.
	StepsPerSecond []float64 `json:"steps_per_second"`
	Sources        []string  `json:"sources"`
	// UnconsolidatedStepsPerSecond[j], set for multi-GPU jobs, is the
	// throughput with one GPU per server; UnconsolidatedSources says how.
	UnconsolidatedStepsPerSecond []float64 `json:"unconsolidated_steps_per_second,omitempty"`
	UnconsolidatedSources        []string  `json:"unconsolidated_sources,omitempty"`
}

// PlannedThroughput predicts a planned job's throughputs on the worker
// types (nil: Gavel's, gpuprofiles.GavelWorkerTypeNames) from the Plan
// page's inputs p at scale GPUs; p's own GPU, nodes and selection are
// ignored. It fails when the job fits on no type.
func PlannedThroughput(ctx context.Context, p request.Plan, scale int, types []string) (PlannedThroughputs, error) {
	if err := p.Validate(); err != nil {
		return PlannedThroughputs{}, err
	}
	if _, err := modelFor(p); err != nil {
		return PlannedThroughputs{}, err
	}
	if scale < 1 || scale > request.MaxClusterGPUs {
		return PlannedThroughputs{}, fmt.Errorf("scale: must be in [1, %d] GPUs, got %d", request.MaxClusterGPUs, scale)
	}
	if _, err := request.PlannedServers(scale, p.GPUsPerNode); err != nil {
		return PlannedThroughputs{}, fmt.Errorf("scale: %w", err)
	}
	if types == nil {
		types = gpuprofiles.GavelWorkerTypeNames()
	}
	out := PlannedThroughputs{WorkerTypes: types, ScaleFactor: scale}
	var err error
	if out.StepsPerSecond, out.Sources, err = plannedThroughputs(ctx, p, scale, types); err != nil {
		return PlannedThroughputs{}, err
	}
	if scale > 1 {
		if out.UnconsolidatedStepsPerSecond, out.UnconsolidatedSources, err = plannedUnconsolidated(ctx, p, scale, types); err != nil {
			return PlannedThroughputs{}, err
		}
	}
	return out, nil
}

// plannedThroughputs predicts a planned job's steps/s on each worker type:
// the planner's best fitting candidate for the job's model on scale GPUs of
// that type, consolidated (one server, or full servers of the Plan page's
// size when scale exceeds one: request.PlannedServers), samples/s ÷ global
// batch (the planner side of Gavel's throughput matrix T, DESIGN.md). A type
// where nothing fits gets 0 and its source says why; a job that fits on no
// type is an error.
func plannedThroughputs(ctx context.Context, p request.Plan, scale int, types []string) ([]float64, []string, error) {
	servers, err := request.PlannedServers(scale, p.GPUsPerNode)
	if err != nil {
		return nil, nil, err
	}
	row, sources, err := plannedRow(ctx, p, scale, servers, types)
	if err != nil {
		return nil, nil, err
	}
	if !slices.ContainsFunc(row, func(v float64) bool { return v > 0 }) {
		return nil, nil, fmt.Errorf("fits on no GPU type with %d GPUs: %s", scale, strings.Join(labelled(types, sources), "; "))
	}
	return row, sources, nil
}

// plannedUnconsolidated predicts a planned job's steps/s on each worker
// type with its scale GPUs on separate servers (§5.3.1's unconsolidated
// placement): the same cost model on scale nodes of one GPU, so every
// collective crosses the Plan page's inter-node network. Types where that
// does not fit get 0 with the reason.
func plannedUnconsolidated(ctx context.Context, p request.Plan, scale int, types []string) ([]float64, []string, error) {
	row, sources, err := plannedRow(ctx, p, scale, scale, types)
	if err != nil {
		return nil, nil, err
	}
	if m, err := modelFor(p); err == nil && m.Profile == "" {
		for k, v := range row {
			if v == 0 {
				sources[k] += " (PTD-P keeps tensor parallelism inside a server, §4.3.2)"
			}
		}
	}
	return row, sources, nil
}

// plannedRow runs the planner for the job's model on scale GPUs of each
// worker type spread evenly over nodes servers, and returns samples/s ÷
// global batch per type with its source (or 0 and why).
func plannedRow(ctx context.Context, p request.Plan, scale, nodes int, types []string) ([]float64, []string, error) {
	row := make([]float64, len(types))
	sources := make([]string, len(types))
	for k, wt := range types {
		id, err := gpuprofiles.WorkerTypeGPU(wt)
		if err != nil {
			return nil, nil, err
		}
		req := p
		req.GPU, req.Nodes, req.GPUsPerNode, req.Selected = id, nodes, scale/nodes, 0
		note := ""
		if req.Precision == "" {
			if req.Precision, err = defaultPrecision(id); err != nil {
				return nil, nil, err
			}
			note = ", " + req.Precision
		}
		spread := ""
		if nodes > 1 {
			bw := p.InterNodeGBps
			if c, err := clusterFor(req); err == nil { // 0: the GPU's own network figure
				bw = c.Levels[len(c.Levels)-1].BandwidthBytesPerSec / 1e9
			}
			spread = fmt.Sprintf(" on %d servers (%g GB/s per GPU between them)", nodes, bw)
		}
		res, err := runPlanner(ctx, req, nil, false)
		switch {
		case err != nil:
			sources[k] = "cannot plan" + spread + ": " + err.Error()
		case len(res.Candidates) == 0:
			sources[k] = "does not fit" + spread + ": " + cmp.Or(res.Problem, "no candidate")
		default:
			c := res.Candidates[0]
			row[k] = c.SamplesPerSecond / float64(p.GlobalBatch)
			sources[k] = fmt.Sprintf("planner (%s) on %d × %s%s: %.4g samples/s ÷ global batch %d = %.4g steps/s (%s, TP %d PP %d DP %d, microbatch %d%s)",
				c.Planner, scale, res.GPU, spread, c.SamplesPerSecond, p.GlobalBatch, row[k], c.Execution.Schedule, c.Execution.TP, c.Execution.PP, c.Execution.DP, c.Execution.MicrobatchSize, note)
			if res.Note != "" {
				sources[k] += ". " + res.Note
			}
		}
	}
	return row, sources, nil
}

// defaultPrecision is the precision a planned job trains in on GPU id when
// the Plan page left it at the default: bf16 where the GPU has it, else
// fp16, else fp32 (Gavel's V100/P100 lack bf16, its K80 fp16 too).
func defaultPrecision(id string) (string, error) {
	g, err := gpuprofiles.ByID(id)
	if err != nil {
		return "", err
	}
	for _, p := range []string{"bf16", "fp16", "fp32"} {
		if _, err := g.Peak(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("gpu %s: no bf16, fp16 or fp32 peak", id)
}

// labelled prefixes each text with its worker type ("k80: …").
func labelled(types, texts []string) []string {
	out := make([]string, len(types))
	for k := range types {
		out[k] = types[k] + ": " + texts[k]
	}
	return out
}
