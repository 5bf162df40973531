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

// gavelGPUs maps Gavel's worker types to the gpuprofiles entries of the
// GPUs its cluster used (dissertation §5.7: AWS p3 V100-SXM2 16 GB, GCP
// P100 PCIe 16 GB, AWS p2 K80, one GK210 die per GPU).
var gavelGPUs = map[string]string{
	"v100": "nvidia-v100-sxm2-16gb",
	"p100": "nvidia-p100-pcie-16gb",
	"k80":  "nvidia-k80-gk210-die",
}

// PlannedJob returns a Cluster-page job for the Plan page's inputs p: its
// label names the model, its throughputs come from the planner, and its
// scale factor is the smallest of Gavel's (1, 2, 4, 8 GPUs) at which the
// model fits on one of the worker types.
func PlannedJob(ctx context.Context, p request.Plan) (request.Job, error) {
	m, err := modelFor(p)
	if err != nil {
		return request.Job{}, err
	}
	snap := p
	snap.Selected = 0
	job := request.Job{Type: "planned: " + m.Name, Weight: 1, Planned: &snap}
	for _, scale := range []int{1, 2, 4, 8} {
		job.Scale = scale
		if _, _, err = plannedThroughputs(ctx, snap, scale, request.WorkerTypes(request.WorkloadJobTypes)); err == nil {
			return job, nil
		}
	}
	return request.Job{}, fmt.Errorf("%s: %w", job.Type, err)
}

// plannedThroughputs predicts a planned job's steps/s on each worker type:
// the planner's best fitting candidate for the job's model on one node of
// scale GPUs of that type, samples/s ÷ global batch (the planner side of
// Gavel's throughput matrix T, DESIGN.md). A type where nothing fits gets 0
// and its source says why; a job that fits on no type is an error.
func plannedThroughputs(ctx context.Context, p request.Plan, scale int, types []string) ([]float64, []string, error) {
	row, sources, err := plannedRow(ctx, p, scale, 1, types)
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
	var err error
	for k, wt := range types {
		id, ok := gavelGPUs[wt]
		if !ok {
			return nil, nil, fmt.Errorf("worker type %q has no GPU profile", wt)
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
		res, err := Plan(ctx, req)
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
