package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"pipeplan/app/request"
	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/launch"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
	"pipeplan/gpuprofiles"
)

// MaxSearchWork bounds a PTD-P search (partition.PTDPOptions.MaxWork), in
// layer predictions (partition.SearchWork). It was 5 million when a layer
// prediction took about 2 µs; since cost.Predictor shares each kind of
// layer's cost between a search's predictions a unit costs 1–20 ns
// (BENCHMARKS.md, "Worst cases"), and 5 million stopped ordinary searches
// — a 64-layer, 8-expert model at 8K tokens on 128 H100 — after 25 ms.
// At 50 million the heaviest searches measured end or stop within 0.05–
// 0.22 s natively and 0.35–1.24 s in wasm under node (GOMAXPROCS=1, load
// average 1–1.5, 2026-11-29: DeepSeek-V3 at 32K on 65,536 H100 searched
// whole, 64,101 configurations; a 256-layer 1,024-expert model stopped at
// the limit; Llama 3 405B 0.02 / 0.13 s): about 45 ns a unit in wasm, so a
// search that used all of it would take some 2 s in the tab, 6–7 s at
// three times the load, inside the 10 s every request must keep.
const MaxSearchWork = 5e7

// Display limits: how many fitting candidates the profile planners and
// non-fitting candidates every planner list (request.Plan.Top bounds the
// fitting ones).
const (
	MaxShownCandidates = 15
	MaxShownInfeasible = 5
)

// Candidate is one evaluated configuration as the candidates table shows it.
type Candidate struct {
	// Planner is the algorithm that produced it ("ptdp", "pipedream").
	Planner string `json:"planner"`
	// Execution is how it runs: the degrees, the microbatch size b and
	// global batch B (m = B/(d·b) microbatches per pipeline and step), the
	// schedule and the recomputation. PipeDream's per-stage replicas are in
	// StageReplicas (dp 1).
	Execution plan.Execution `json:"execution"`
	// StageReplicas are PipeDream's replicas of each stage (§2.4.1), nil
	// for the planners whose replication is DP.
	StageReplicas []int `json:"stage_replicas,omitempty"`
	// Microbatches is the number of microbatches the schedule runs per
	// pipeline: Execution's m, except PipeDream's inputs in flight (NOAM,
	// §2.3.2).
	Microbatches int `json:"microbatches"`
	// GlobalBatch is the samples per step the row's times are for: the
	// page's global batch, the same in every row (PipeDream updates its
	// weights after each minibatch, so its row differs from its Execution).
	GlobalBatch int `json:"global_batch"`
	// FLOPsPerIteration counts the FLOPs of one step, recomputation
	// included (eq. 4.2; PTD-P only).
	FLOPsPerIteration float64 `json:"flops_per_iteration,omitempty"`
	// IterationSeconds is the predicted time of one step of GlobalBatch
	// samples (eq. 4.4 per step).
	IterationSeconds float64 `json:"iteration_seconds"`
	// SamplesPerSecond is the predicted throughput.
	SamplesPerSecond float64 `json:"samples_per_second"`
	// TokensPerSecond is SamplesPerSecond × sequence length (PTD-P only).
	TokensPerSecond float64 `json:"tokens_per_second,omitempty"`
	// TFLOPSPerGPU is the hardware TFLOP/s per GPU: the FLOPs executed,
	// recomputation included (eq. 4.2), over time.
	TFLOPSPerGPU float64 `json:"tflops_per_gpu"`
	// HardwareTFLOPSPerGPU is TFLOPSPerGPU under the name that says which
	// of the two TFLOP/s it is (tflops_per_gpu stays for earlier clients).
	HardwareTFLOPSPerGPU float64 `json:"hardware_tflops_per_gpu"`
	// ModelTFLOPSPerGPU is the model TFLOP/s per GPU: the model's FLOPs,
	// without recomputation, over time (the basis of MFU); 0 when unknown.
	ModelTFLOPSPerGPU float64 `json:"model_tflops_per_gpu,omitempty"`
	// MFU is the model FLOPs utilization.
	MFU float64 `json:"mfu"`
	// BubbleFraction is the pipeline bubble (p−1)/(v·m) (§4.2.2).
	BubbleFraction float64 `json:"bubble_fraction"`
	// Memory is the most loaded GPU's memory.
	Memory cost.Memory `json:"memory"`
	// Breakdown splits IterationSeconds into compute, exposed communication
	// of each kind, bubble and optimizer (PTD-P only).
	Breakdown *cost.TimeBreakdown `json:"breakdown,omitempty"`
	// TwoBW is the 2BW planner's execution (no pipelining, 2BW, 2BW with
	// recomputation) and gradient accumulation; nil for the other planners.
	TwoBW *partition.TwoBWDetail `json:"two_bw,omitempty"`
	// Fits reports whether Memory fits the GPU.
	Fits bool `json:"fits"`
	// Reason says why it does not fit ("" when it fits).
	Reason string `json:"reason,omitempty"`
	// Caveat says why its prediction is less certain than usual
	// (cost.Prediction.Caveats: the model's, and an uncalibrated GPU's;
	// PTD-P only).
	Caveat string `json:"caveat,omitempty"`
}

// Result is the planner's answer for the Plan page.
type Result struct {
	// Model and GPU name what was planned.
	Model string `json:"model"`
	GPU   string `json:"gpu"`
	// Transformer is the planned transformer's dimensions and Params its
	// parameter count (eq. 4.3); unset for profile models.
	Transformer *model.Transformer `json:"transformer,omitempty"`
	Params      float64            `json:"params,omitempty"`
	// ActiveParams is the parameters one token goes through (Params for a
	// dense model; a MoE model's shared and top-k routed experts).
	ActiveParams float64 `json:"active_params,omitempty"`
	// Mode is "evaluate" when the request fixed every PTD-P choice (one
	// configuration), else "search".
	Mode string `json:"mode"`
	// GPUs is the number of GPUs of the cluster.
	GPUs int `json:"gpus"`
	// CapacityBytes is one GPU's memory.
	CapacityBytes float64 `json:"capacity_bytes"`
	// InterNodeBytesPerSec is the per-GPU bandwidth between nodes the plan
	// used: the request's, or the GPU's own network figure when it gave 0.
	InterNodeBytesPerSec float64 `json:"inter_node_bytes_per_sec"`
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
	// Schedules are the selected configuration under each pipeline
	// schedule (PTD-P with more than one stage; scheduleOptions).
	Schedules []ScheduleOption `json:"schedules,omitempty"`
	// Problem says why there is no plan (e.g. nothing fits); "" when there is one.
	Problem string `json:"problem,omitempty"`
	// Note states an assumption the user should know about.
	Note string `json:"note,omitempty"`
	// MadPipe is the MadPipe planner's answer (stages on GPUs, period,
	// memory per GPU); nil for the other planners.
	MadPipe *MadPipeView `json:"madpipe,omitempty"`
	// PipeDream is the selected candidate's PipeDream partition (stage
	// replicas, NOAM, the data-parallel baseline); nil for other planners.
	PipeDream *partition.PipeDreamResult `json:"pipedream,omitempty"`
	// NoExport says why a result with candidates has no exportable Plan.
	NoExport string `json:"no_export,omitempty"`
	// Launch is the selected Plan as each engine's launch artifact
	// (core/launch), or why the engine cannot run it; nil without a Plan.
	Launch []LaunchArtifact `json:"launch,omitempty"`
}

// LaunchArtifact is the selected plan as one engine's launch artifact.
type LaunchArtifact struct {
	// Format is core/launch's name of the artifact ("megatron", "slurm", …).
	Format string `json:"format"`
	// Title says what it is, e.g. "Megatron-LM arguments".
	Title string `json:"title"`
	// Text is the artifact; "" when the engine cannot run the plan.
	Text string `json:"text,omitempty"`
	// Problem says why the engine cannot run the plan as planned.
	Problem string `json:"problem,omitempty"`
}

// launchTitles name core/launch's formats for people.
var launchTitles = map[string]string{
	"megatron": "Megatron-LM arguments", "torchrun": "torchrun (Megatron-LM, each node)",
	"slurm": "Slurm batch script (Megatron-LM)", "k8s": "Kubeflow PyTorchJob (Megatron-LM)",
	"torchtitan": "torchtitan job TOML", "deepspeed": "DeepSpeed config JSON",
}

// LaunchFormats are the launch artifacts a Result carries, in its order.
func LaunchFormats() []string { return slices.Clone(launch.Formats) }

// launchArtifacts writes p in every launch format.
func launchArtifacts(p *plan.Plan) []LaunchArtifact {
	out := make([]LaunchArtifact, len(launch.Formats))
	for i, f := range launch.Formats {
		out[i] = LaunchArtifact{Format: f, Title: launchTitles[f]}
		text, err := launch.Artifact(f, p, "")
		if err != nil {
			out[i].Problem = err.Error()
			continue
		}
		out[i].Text = text
	}
	return out
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
	res, err := runPlanner(ctx, in, progress, true)
	if err == nil && res.Plan != nil {
		res.Launch = launchArtifacts(res.Plan)
	}
	return res, err
}

// runPlanner is PlanProgress; without detailed it ranks the candidates
// only, leaving out the selected one's run plan, stage memory and
// timeline (a planned job needs its throughput alone: PlannedJob).
func runPlanner(ctx context.Context, in request.Plan, progress func(float64), detailed bool) (Result, error) {
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
		if in.FixesPTDP() {
			return Result{}, &request.FieldError{Field: "plan.model", Msg: fmt.Sprintf("%s is a measured per-layer profile; tp, pp, microbatch, interleave, sequence_parallel and allow_cross_node_tp apply to transformer specs (PTD-P) only", m.Name)}
		}
		res, err := planProfile(ctx, m, c, in, progress, detailed)
		res.Mode = "search"
		res.Candidates = res.Candidates[:min(len(res.Candidates), in.Shown())]
		return res, err
	}
	if f := in.ProfileOnly(); f != "" {
		return Result{}, &request.FieldError{Field: f, Msg: fmt.Sprintf("applies to layer profiles (PipeDream, 2BW, MadPipe); %s is a transformer spec (PTD-P, or 2BW over its layers)", m.Name)}
	}
	switch in.Planner {
	case "best", "ptdp":
	case "2bw":
		return planTwoBWTransformer(ctx, m, c, in, detailed)
	default:
		return Result{}, fmt.Errorf("plan.planner: %s partitions measured per-layer profiles; %s is a transformer spec, planned by PTD-P or 2BW (choose \"PTD-P\", \"2BW\" or \"Best overall\")", in.Planner, m.Name)
	}
	return planPTDP(ctx, m, c, in, detailed)
}

// clusterFor builds the request's cluster: its explicit levels, else nodes
// of GPUs talking over the GPU's own fabric inside a node and the given
// network between nodes (0: the GPU's own network figure, hw.NewCluster).
func clusterFor(in request.Plan) (hw.Cluster, error) {
	gpu, err := gpuprofiles.ByID(in.GPU)
	if err != nil {
		return hw.Cluster{}, &request.FieldError{Field: "plan.gpu", Msg: err.Error()}
	}
	if len(in.Levels) > 0 {
		c := hw.Cluster{GPU: gpu, Levels: in.Levels}
		return c, c.Validate()
	}
	return hw.NewCluster(gpu, in.GPUsPerNode, in.Nodes, in.InterNodeGBps*1e9)
}

// planPTDP searches tensor × pipeline × data parallelism (dissertation §4.3)
// with the paper's execution choices (scatter/gather on, recomputation
// searched) and the request's fixed choices, or evaluates the one
// configuration a request fixes entirely; the selected candidate's details
// when detailed (runPlanner).
func planPTDP(ctx context.Context, m ModelPreset, c hw.Cluster, in request.Plan, detailed bool) (Result, error) {
	tr := *m.Transformer
	res := Result{Model: m.Name, GPU: c.GPU.Name, GPUs: c.GPUs(), CapacityBytes: c.GPU.MemoryBytes,
		InterNodeBytesPerSec: c.Levels[len(c.Levels)-1].BandwidthBytesPerSec,
		Transformer:          &tr, Params: tr.Params(), ActiveParams: tr.ActiveParams(), Mode: "search"}
	flash, note := flashFor(in.FlashAttention, c.GPU)
	res.Note = strings.TrimSpace(note + " " + domainNote(in, c))
	if modules, err := model.ParseRecomputeModules(in.RecomputeModules); err == nil { // request validation checked the names
		if err := tr.CheckRecomputeModules(modules); err != nil {
			return Result{}, &request.FieldError{Field: "plan.recompute_modules", Msg: strings.TrimPrefix(err.Error(), "recompute_modules: ")}
		}
	}
	opt := partition.PTDPOptions{Fixed: plan.Execution{GlobalBatch: in.GlobalBatch, ScatterGather: true,
		Optimizer: in.Optimizer, Recompute: model.Recompute(in.Recompute), RecomputeLayers: in.RecomputeLayers, RecomputeModules: in.RecomputeModules,
		TP: in.TP, PP: in.PP, CP: in.CP, EP: in.EP, ETP: in.ETP, EPDispatcher: in.EPDispatcher, MicrobatchSize: in.Microbatch, Interleave: in.Interleave,
		SequenceParallel: in.UsesSequenceParallel(), FlashAttention: flash, FP8ParamGather: in.FP8ParamGather, Schedule: schedule.Kind(in.Schedule), Overlap: overlapFor(in, c.GPU),
		UnfusedGradAccumulation: in.UnfusedGradAccumulation},
		AllowCrossNodeTP: in.AllowCrossNodeTP, SearchZeRO: in.ZeRO == nil, SearchCPComm: in.CPComm == "", MaxWork: MaxSearchWork,
		Keep: max(in.Shown(), MaxShownInfeasible)}
	if in.ZeRO != nil {
		opt.Fixed.ZeRO = *in.ZeRO
	}
	opt.Fixed.CPComm, opt.Fixed.AttentionKernel = in.CPComm, in.AttentionKernel
	var found partition.PTDPResult
	var err error
	if opt.Cost.Efficiency, err = calibratedCurve(in, tr, c); err != nil {
		return Result{}, err
	}
	if in.Evaluates() {
		res.Mode = "evaluate"
		found, err = evaluatePTDP(tr, c, opt)
	} else {
		found, err = partition.SearchPTDP(ctx, tr, c, opt, nil)
		if errors.Is(err, partition.ErrSearchTooLarge) {
			return Result{}, &request.FieldError{Field: "plan.nodes", Msg: fmt.Sprintf("%d GPUs for %d layers: %v: pin tp, pp, cp, ep, microbatch, interleave, recompute or zero, or plan fewer GPUs", c.GPUs(), tr.Layers, err)}
		}
	}
	if err != nil && len(found.Infeasible) == 0 {
		return Result{}, err
	}
	res.Feasible, res.Evaluated = found.Feasible, found.Evaluated
	for i, cand := range found.Candidates {
		if i == in.Shown() {
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
	if !detailed {
		return res, nil
	}
	cfg := res.Candidates[res.Selected].Execution
	if res.Plan, err = partition.PTDPPlan(tr, c, cfg, opt.Cost); err != nil {
		return Result{}, err
	}
	pred, err := cost.NewPredictor(tr, c, opt.Cost)
	if err != nil {
		return Result{}, err
	}
	pr, err := pred.Predict(cfg)
	if err != nil {
		return Result{}, err
	}
	res.StageMemory = pr.StageMemory
	if caveat := caveatOf(pr); caveat != "" {
		res.Note = strings.TrimSpace(res.Note + " The chosen plan's prediction is uncertain: " + caveat + ".")
	}
	if res.TimelineSVG, res.TimelineCaption, err = TimelineSVG(ctx, res.Plan, pr, pred); err != nil {
		return Result{}, err
	}
	res.Schedules = scheduleOptions(tr, c, cfg, opt.Cost)
	return res, nil
}

// domainNote says, where the GPU's NVLink domain spans more than the
// request's nodes and the cluster more than one node, that the plan costs
// the nodes' NVLink alone (the network between them), and how to cost the
// domain; "" otherwise, and for a cluster given by its levels.
func domainNote(in request.Plan, c hw.Cluster) string {
	link := c.GPU.IntraNode
	if in.Levels != nil || link == nil || link.DomainGPUs <= in.GPUsPerNode || c.GPUs() <= in.GPUsPerNode {
		return ""
	}
	return fmt.Sprintf("The %s joins up to %d GPUs in one NVLink domain, but this plan costs nodes of %d GPUs joined by the network: set the GPUs per node to the GPUs the job holds in one domain (64 of a 72-GPU rack, say) to cost its tensor, context and expert parallelism over NVLink.",
		c.GPU.Name, link.DomainGPUs, in.GPUsPerNode)
}

// flashFor is the request's flash attention on gpu, with a note when the
// GPU cannot run it: FlashAttention-2 (what Megatron-Core and Transformer
// Engine run) needs an Ampere or newer GPU, the ones with bf16 tensor cores.
func flashFor(asked bool, gpu hw.GPU) (bool, string) {
	if asked && gpu.PeakFLOPS[hw.PrecisionBF16] == 0 {
		return false, fmt.Sprintf("Flash attention is off: it needs an Ampere or newer GPU (bf16 tensor cores), and the %s has none.", gpu.Name)
	}
	return asked, ""
}

// evaluatePTDP predicts the one configuration opt.Fixed gives every degree
// of (cp and ep left 0 are 1; d is what remains of the GPUs; the ZeRO
// stage chosen as the search does when not given), as a result with a
// single candidate, fitting or not (then with the error saying why).
func evaluatePTDP(tr model.Transformer, c hw.Cluster, opt partition.PTDPOptions) (partition.PTDPResult, error) {
	cfg := opt.Fixed
	cfg.CP, cfg.EP = max(cfg.CP, 1), max(cfg.EP, 1)
	if c.GPUs()%(cfg.TP*cfg.PP*cfg.CP) != 0 {
		return partition.PTDPResult{}, &request.FieldError{Field: "plan.pp", Msg: fmt.Sprintf("tp·pp·cp must divide the %d GPUs, got %d·%d·%d", c.GPUs(), cfg.TP, cfg.PP, cfg.CP)}
	}
	cfg.DP = c.GPUs() / (cfg.TP * cfg.PP * cfg.CP)
	cand, _, err := partition.EvaluatePTDPZeRO(tr, c, cfg, opt)
	if err != nil {
		return partition.PTDPResult{}, err
	}
	if !cand.Fits {
		return partition.PTDPResult{Infeasible: []partition.PTDPCandidate{cand}, Evaluated: 1}, fmt.Errorf("memory: does not fit: %s", cand.Reason)
	}
	return partition.PTDPResult{Candidates: []partition.PTDPCandidate{cand}, Feasible: 1, Evaluated: 1}, nil
}

// DefaultOverlap is the communication overlap Megatron-LM recommends on
// gpu, which its README's H100 runs use ("fine-grained overlapping of
// data-parallel (--overlap-grad-reduce --overlap-param-gather),
// tensor-parallel (--tp-comm-overlap) and pipeline-parallel
// communication"): the data-parallel overlaps on every GPU (bucketed
// reduction during the backward, as PyTorch DDP does too), the
// tensor-parallel one only where Transformer Engine's userbuffers run —
// Hopper or newer GPUs (those with fp8 tensor cores) joined by NVLink —
// and with sequence parallelism, which --tp-comm-overlap requires.
func DefaultOverlap(gpu hw.GPU, sequenceParallel bool) plan.Overlap {
	nvlink := gpu.IntraNode != nil && gpu.IntraNode.Type == "NVLink"
	return plan.Overlap{GradReduce: true, ParamGather: true, TPComm: sequenceParallel && nvlink && gpu.PeakFLOPS[hw.PrecisionFP8] > 0}
}

// overlapFor is the request's overlap: each choice it gives, else the
// GPU's default; the expert-parallel overlap as the request says.
func overlapFor(in request.Plan, gpu hw.GPU) plan.Overlap {
	o := DefaultOverlap(gpu, in.UsesSequenceParallel())
	o.EPComm = in.OverlapEPComm
	for _, f := range []struct {
		set *bool
		to  *bool
	}{{in.OverlapGradReduce, &o.GradReduce}, {in.OverlapParamGather, &o.ParamGather}, {in.TPCommOverlap, &o.TPComm}} {
		if f.set != nil {
			*f.to = *f.set
		}
	}
	return o
}

// fromPTDP shows a PTD-P candidate, its execution with the cost model's
// defaults filled in (the schedule and recomputation it was predicted with).
func fromPTDP(c partition.PTDPCandidate) Candidate {
	p := c.Prediction
	breakdown := p.Time
	return Candidate{
		Planner: "ptdp", Execution: cost.WithDefaults(c.Config), FLOPsPerIteration: p.FLOPsPerIteration,
		Microbatches: p.Microbatches, GlobalBatch: c.Config.GlobalBatch,
		IterationSeconds: p.IterationSeconds, SamplesPerSecond: p.SamplesPerSec, TokensPerSecond: p.TokensPerSec,
		TFLOPSPerGPU: p.TFLOPSPerGPU, HardwareTFLOPSPerGPU: p.TFLOPSPerGPU, ModelTFLOPSPerGPU: p.ModelTFLOPSPerGPU, MFU: p.MFU, BubbleFraction: p.BubbleFraction,
		Memory: p.Memory, Breakdown: &breakdown, Fits: c.Fits, Reason: c.Reason, Caveat: caveatOf(p),
	}
}

// caveatOf is Candidate.Caveat of prediction p: its caveats
// (cost.Prediction.Caveats) joined by "; ".
func caveatOf(p cost.Prediction) string { return strings.Join(p.Caveats(), "; ") }
