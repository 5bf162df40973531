package app

import (
	"context"
	"fmt"

	"pipeplan/app/request"
	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
	"pipeplan/gpuprofiles"
)

// Display limits: how many fitting and non-fitting candidates a result lists.
const (
	MaxShownCandidates = 15
	MaxShownInfeasible = 5
)

// Candidate is one evaluated configuration as the candidates table shows it.
type Candidate struct {
	// Planner is the algorithm that produced it ("ptdp", "pipedream").
	Planner string `json:"planner"`
	// TP, PP, DP and Interleave are the degrees; PipeDream's per-stage
	// replicas are in the plan's stages (DP 1).
	TP         int `json:"tp"`
	PP         int `json:"pp"`
	DP         int `json:"dp"`
	Interleave int `json:"interleave"`
	// StageReplicas are PipeDream's replicas of each stage (§2.4.1), nil
	// for the planners whose replication is DP.
	StageReplicas []int `json:"stage_replicas,omitempty"`
	// GlobalBatch is the samples per step the row's times are for: the
	// page's global batch, the same in every row.
	GlobalBatch int `json:"global_batch"`
	// Microbatch is the microbatch size b; Microbatches is m per pipeline and step.
	Microbatch   int `json:"microbatch"`
	Microbatches int `json:"microbatches"`
	// Schedule and Recompute name the pipeline schedule and recomputation.
	Schedule  string `json:"schedule"`
	Recompute string `json:"recompute"`
	// IterationSeconds is the predicted time of one step of GlobalBatch
	// samples (eq. 4.4 per step).
	IterationSeconds float64 `json:"iteration_seconds"`
	// SamplesPerSecond is the predicted throughput.
	SamplesPerSecond float64 `json:"samples_per_second"`
	// TFLOPSPerGPU is the hardware TFLOP/s per GPU: the FLOPs executed,
	// recomputation included (eq. 4.2), over time.
	TFLOPSPerGPU float64 `json:"tflops_per_gpu"`
	// ModelTFLOPSPerGPU is the model TFLOP/s per GPU: the model's FLOPs,
	// without recomputation, over time (the basis of MFU); 0 when unknown.
	ModelTFLOPSPerGPU float64 `json:"model_tflops_per_gpu,omitempty"`
	// MFU is the model FLOPs utilization.
	MFU float64 `json:"mfu"`
	// BubbleFraction is the pipeline bubble (p−1)/(v·m) (§4.2.2).
	BubbleFraction float64 `json:"bubble_fraction"`
	// Memory is the most loaded GPU's memory.
	Memory cost.Memory `json:"memory"`
	// Fits reports whether Memory fits the GPU.
	Fits bool `json:"fits"`
	// Reason says why it does not fit ("" when it fits).
	Reason string `json:"reason,omitempty"`

	config plan.Execution // the PTD-P configuration, to export it
}

// Result is the planner's answer for the Plan page.
type Result struct {
	// Model and GPU name what was planned.
	Model string `json:"model"`
	GPU   string `json:"gpu"`
	// GPUs is the number of GPUs of the cluster.
	GPUs int `json:"gpus"`
	// CapacityBytes is one GPU's memory.
	CapacityBytes float64 `json:"capacity_bytes"`
	// Candidates are the best fitting configurations, fastest first.
	Candidates []Candidate `json:"candidates"`
	// Infeasible are the smallest configurations that do not fit.
	Infeasible []Candidate `json:"infeasible"`
	// Feasible and Evaluated count the fitting and all evaluated configurations.
	Feasible  int `json:"feasible"`
	Evaluated int `json:"evaluated"`
	// Selected is the index in Candidates of the plan shown in detail.
	Selected int `json:"selected"`
	// Plan is the selected configuration as an exportable run plan; nil when nothing fits.
	Plan *plan.Plan `json:"plan,omitempty"`
	// StageMemory is the selected plan's memory per pipeline stage.
	StageMemory []cost.Memory `json:"stage_memory,omitempty"`
	// TimelineSVG draws the selected plan's schedule (core/schedule); TimelineCaption says how.
	TimelineSVG     string `json:"timeline_svg,omitempty"`
	TimelineCaption string `json:"timeline_caption,omitempty"`
	// Problem says why there is no plan (e.g. nothing fits); "" when there is one.
	Problem string `json:"problem,omitempty"`
	// Note states an assumption the user should know about.
	Note string `json:"note,omitempty"`
	// MadPipe is the MadPipe planner's answer (stages on GPUs, period,
	// memory per GPU); nil for the other planners.
	MadPipe *MadPipeView `json:"madpipe,omitempty"`
	// NoExport says why a result with candidates has no exportable Plan.
	NoExport string `json:"no_export,omitempty"`
}

// Plan runs the chosen planner on the Plan page's inputs. Bad inputs are
// errors; a model that does not fit is a Result with Problem set and the
// infeasible configurations listed.
func Plan(ctx context.Context, in request.Plan) (Result, error) {
	return PlanProgress(ctx, in, nil)
}

// PlanProgress is Plan reporting the fraction done of a slow planner
// (MadPipe) to progress, if not nil.
func PlanProgress(ctx context.Context, in request.Plan, progress func(float64)) (Result, error) {
	if err := in.Validate(); err != nil {
		return Result{}, err
	}
	m, err := modelFor(in)
	if err != nil {
		return Result{}, err
	}
	c, err := clusterFor(in)
	if err != nil {
		return Result{}, err
	}
	if m.Profile != "" {
		return planProfile(ctx, m, c, in, progress)
	}
	switch in.Planner {
	case "best", "ptdp":
	default:
		return Result{}, fmt.Errorf("plan.planner: %s partitions measured per-layer profiles; %s is a transformer spec, planned by PTD-P (choose \"PTD-P\" or \"Best overall\")", in.Planner, m.Name)
	}
	return planPTDP(ctx, m, c, in)
}

// clusterFor builds the request's cluster: nodes of GPUs talking over the
// GPU's own fabric inside a node and the given network between nodes.
func clusterFor(in request.Plan) (hw.Cluster, error) {
	gpu, err := gpuprofiles.ByID(in.GPU)
	if err != nil {
		return hw.Cluster{}, fmt.Errorf("plan.gpu: %w", err)
	}
	return hw.NewCluster(gpu, in.GPUsPerNode, in.Nodes, in.InterNodeGBps*1e9)
}

// planPTDP searches tensor × pipeline × data parallelism (dissertation §4.3)
// with the paper's execution choices (scatter/gather on, recomputation searched).
func planPTDP(ctx context.Context, m ModelPreset, c hw.Cluster, in request.Plan) (Result, error) {
	res := Result{Model: m.Name, GPU: c.GPU.Name, GPUs: c.GPUs(), CapacityBytes: c.GPU.MemoryBytes}
	opt := partition.PTDPOptions{Fixed: plan.Execution{GlobalBatch: in.GlobalBatch, ScatterGather: true,
		Optimizer: in.Optimizer, ZeRO: in.ZeRO, Recompute: model.Recompute(in.Recompute)}}
	tr := *m.Transformer
	found, err := partition.SearchPTDP(ctx, tr, c, opt, nil)
	if err != nil && len(found.Infeasible) == 0 {
		return Result{}, err
	}
	res.Feasible = len(found.Candidates)
	res.Evaluated = len(found.Candidates) + len(found.Infeasible)
	for i, cand := range found.Candidates {
		if i == MaxShownCandidates {
			break
		}
		res.Candidates = append(res.Candidates, fromPTDP(cand))
	}
	for i, cand := range found.Infeasible {
		if i == MaxShownInfeasible {
			break
		}
		res.Infeasible = append(res.Infeasible, fromPTDP(cand))
	}
	if err != nil {
		res.Problem = err.Error()
		return res, nil
	}
	res.Selected = min(max(in.Selected, 0), len(res.Candidates)-1)
	cfg := res.Candidates[res.Selected].config
	if res.Plan, err = partition.PTDPPlan(tr, c, cfg, opt.Cost); err != nil {
		return Result{}, err
	}
	pr, err := cost.Predict(tr, c, cfg, opt.Cost)
	if err != nil {
		return Result{}, err
	}
	res.StageMemory = pr.StageMemory
	if res.TimelineSVG, res.TimelineCaption, err = TimelineSVG(ctx, res.Plan, pr.Time); err != nil {
		return Result{}, err
	}
	return res, nil
}

func fromPTDP(c partition.PTDPCandidate) Candidate {
	p := c.Prediction
	cfg := c.Config
	return Candidate{
		Planner: "ptdp", TP: cfg.TP, PP: cfg.PP, DP: cfg.DP, Interleave: max(cfg.Interleave, 1),
		Microbatch: cfg.MicrobatchSize, Microbatches: p.Microbatches,
		Schedule: scheduleKind(cfg), Recompute: recomputeName(cfg.Recompute), config: cfg,
		IterationSeconds: p.IterationSeconds, SamplesPerSecond: p.SamplesPerSec,
		TFLOPSPerGPU: p.TFLOPSPerGPU, ModelTFLOPSPerGPU: p.ModelTFLOPSPerGPU, MFU: p.MFU, BubbleFraction: p.BubbleFraction,
		Memory: p.Memory, Fits: c.Fits, Reason: c.Reason, GlobalBatch: cfg.GlobalBatch,
	}
}

// scheduleKind is the schedule a PTD-P configuration runs: its own, or
// 1F1B, interleaved when v > 1 (as core/cost reads an empty one).
func scheduleKind(cfg plan.Execution) string {
	switch {
	case cfg.Schedule != "":
		return string(cfg.Schedule)
	case cfg.Interleave > 1:
		return string(schedule.Interleaved)
	default:
		return string(schedule.OneFOneB)
	}
}

func recomputeName(r model.Recompute) string {
	if r == "" {
		return string(model.RecomputeNone)
	}
	return string(r)
}
