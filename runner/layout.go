package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// supportedKinds are the schedule kinds the worker executes: every kind of
// core/schedule, from its action lists (F, B, I, W and OPT_STEP; versions
// for 2bw), its chunks looped over the pipeline positions or placed in a V
// (runConfig.position).
var supportedKinds = schedule.Kinds

// rankInfo is what one torchrun rank runs: one tensor-parallel shard of one
// context-parallel rank's share of a pipeline position's chunks on one replica.
type rankInfo struct {
	Rank    int `json:"rank"`
	Stage   int `json:"stage"`
	Replica int `json:"replica"`
	// CPRank is the rank's place in its context-parallel group.
	CPRank int `json:"cp_rank"`
	// TPRank is the rank's place in its tensor-parallel group.
	TPRank int `json:"tp_rank"`
	// Chunks are the first and last layers of each model chunk the rank
	// holds: chunk c is virtual stage Stage + c·stages.
	Chunks [][2]int `json:"chunks"`
	// Device is the schedule device whose action list the rank runs.
	Device int `json:"device"`
}

// workerModel is the model the worker builds (see model.py Chunk).
type workerModel struct {
	// Kind is "transformer" (GPT decoder blocks between a token embedding
	// and a vocabulary projection with cross-entropy) or "profile"
	// (synthetic Linear bottleneck layers with an MSE loss).
	Kind    string `json:"kind"`
	Layers  int    `json:"layers"`
	Seed    int    `json:"seed"`
	Hidden  int    `json:"hidden,omitempty"`
	Heads   int    `json:"heads,omitempty"`
	KVHeads int    `json:"kv_heads,omitempty"`
	HeadDim int    `json:"head_dim,omitempty"`
	Seq     int    `json:"seq,omitempty"`
	FFN     int    `json:"ffn,omitempty"`
	// Vocab is the vocabulary the synthetic tokens are drawn from;
	// PaddedVocab is it rounded up to a multiple of tp (as Megatron-LM pads),
	// the rows of the embedding and output weights.
	Vocab       int `json:"vocab,omitempty"`
	PaddedVocab int `json:"padded_vocab,omitempty"`
	// Gated makes the MLP SwiGLU; Norm is "layernorm" or "rmsnorm"; Bias is
	// "all", "none" or "qkv"; Position is "learned" or "rope"; Tied shares
	// the embedding with the output layer.
	Gated    bool   `json:"gated"`
	Norm     string `json:"norm,omitempty"`
	Bias     string `json:"bias,omitempty"`
	Position string `json:"position,omitempty"`
	Tied     bool   `json:"tied"`
	// Experts is the number of routed experts of a MoE model (0: dense);
	// TopK the experts each token goes to; ExpertFFN an expert's inner
	// size; SharedExperts the shared experts every token goes through;
	// FirstDense the leading layers that keep a dense MLP of size FFN,
	// MoEEvery the interleaving of the others.
	Experts       int `json:"experts,omitempty"`
	TopK          int `json:"topk,omitempty"`
	ExpertFFN     int `json:"expert_ffn,omitempty"`
	SharedExperts int `json:"shared_experts,omitempty"`
	FirstDense    int `json:"first_dense,omitempty"`
	// MoEEvery makes only every MoEEvery-th layer past FirstDense an
	// expert one (1-based; model.MoE.Every); 0 or 1: all of them.
	MoEEvery int `json:"moe_every,omitempty"`
	// ExpertGroups and GroupTopK limit each token's experts to GroupTopK
	// of ExpertGroups contiguous groups (model.MoE.Groups); 0: no limit.
	ExpertGroups int `json:"expert_groups,omitempty"`
	GroupTopK    int `json:"group_topk,omitempty"`
	// Precision is the plan's training precision; "bf16" runs the
	// transformer under torch.autocast on CUDA (fp32 on CPU).
	Precision string `json:"precision,omitempty"`
	// Width is the activation width of a profile model's layers.
	Width int `json:"width,omitempty"`
	// Bottleneck is each profile layer's inner width, chosen so that the
	// layer's fp32 parameters match its profiled parameter bytes.
	Bottleneck []int `json:"bottleneck,omitempty"`
}

// runConfig is run.json, the worker's whole input.
type runConfig struct {
	Device  string `json:"device"`
	Backend string `json:"backend"`
	// Schedule is the schedule kind run: the plan's, or --schedule's.
	Schedule string      `json:"schedule"`
	Model    workerModel `json:"model"`
	// Stages is the number of pipeline positions (devices of one pipeline).
	Stages int `json:"stages"`
	// Chunks is the number of model chunks per position (interleave v,
	// or a V-shaped kind's two).
	Chunks int `json:"chunks"`
	// ChunkPositions is the position that runs each of the Stages·Chunks
	// virtual stages (schedule.KindInfo.ChunkDevice): c·Stages + r runs on
	// r where the chunks loop, r and 2·Stages−1−r in a V (zb-v, dualpipe-v). A
	// position's chunk c is the c-th virtual stage it runs (virtualStage);
	// the worker reads both from it.
	ChunkPositions []int `json:"chunk_positions"`
	// TP is the tensor-parallel degree run; SequenceParallel shards the
	// activations outside the tensor-parallel layers over its ranks.
	TP               int  `json:"tp"`
	SequenceParallel bool `json:"sequence_parallel"`
	// CP is the context-parallel degree run (the sequence split over
	// ranks); EP the expert-parallel degree (experts split over the
	// replicas × cp ranks of a stage's tensor-parallel rank).
	CP             int        `json:"cp"`
	EP             int        `json:"ep"`
	Replicas       int        `json:"replicas"`
	Microbatches   int        `json:"microbatches"`
	MicrobatchSize int        `json:"microbatch_size"`
	Steps          int        `json:"steps"`
	Warmup         int        `json:"warmup"`
	LR             float64    `json:"lr"`
	Ranks          []rankInfo `json:"ranks"`
	// Actions is each schedule device's action list, in compact form
	// ("0F1", "0F5v1"): for one step when the schedule flushes (run once
	// per step), for the whole run (Batches batches) when it does not.
	Actions [][]string `json:"actions"`
	// Versioning is the schedule's weight-version rule (synchronous,
	// stashed, vertical-sync, double-buffered).
	Versioning string `json:"versioning"`
	// Batches is the number of batches (steps) one pass of the action
	// lists runs: 1 for synchronous schedules, warmup + steps otherwise.
	Batches int `json:"batches"`
	// StageReplicas is each stage's replica count when stages are
	// replicated unequally and fed round-robin (1F1B-RR: microbatch k runs
	// on replica k mod r of stage s); nil for parallel pipelines.
	StageReplicas []int `json:"stage_replicas,omitempty"`
	// Recompute is the plan's activation recomputation (none, selective,
	// full) and RecomputeLayers, with full, how many layers of each model
	// chunk recompute (0: every one); model.py runs them through
	// torch.utils.checkpoint.
	Recompute       string `json:"recompute"`
	RecomputeLayers int    `json:"recompute_layers"`
	// Zero is the plan's ZeRO stage: 1 shards the optimizer state over the
	// data-parallel replicas (the distributed optimizer).
	Zero int `json:"zero"`
	// OverlapGradReduce launches each gradient bucket's reduction from the
	// backward pass as soon as the bucket is ready; otherwise all buckets
	// are reduced at the optimizer step.
	OverlapGradReduce bool `json:"overlap_grad_reduce"`
	// FirstBucketBytes and BucketBytes cap the gradient buckets (the first
	// one filled, then the others), PyTorch DDP's defaults.
	FirstBucketBytes int `json:"first_bucket_bytes"`
	BucketBytes      int `json:"bucket_bytes"`
	// Momentum is the SGD momentum of the optimizer (its state, which
	// ZeRO-1 shards).
	Momentum float64 `json:"momentum"`
	OutDir   string  `json:"out_dir"`
	// ScaledDown records that --scale-down shrank the plan.
	ScaledDown bool `json:"scaled_down"`
	// Comparable is whether the run is the plan as predicted: full size, the plan's schedule.
	Comparable bool `json:"comparable"`
	// schedule is the generated schedule the actions come from.
	schedule *schedule.Schedule
}

// Scale-down limits: small enough that a 2-core CPU runs a step in well under a second.
const (
	scaleLayersPerStage = 2
	scaleHidden         = 64
	scaleHeads          = 4
	scaleSeq            = 16
	scaleVocab          = 128
	scaleTP             = 2
	scaleCP             = 2
	scaleExperts        = 8
	maxExperts          = 4096 // model.py's MAX_EXPERTS
	scaleMicrobatches   = 8
	scaleMicrobatchSize = 2
	scaleProfileWidth   = 64
	scaleLayerBytes     = 1 << 20
	profileWidth        = 256
	maxLayerBytes       = 1 << 40
	fp32Bytes           = 4
)

// Gradient buckets and optimizer of the worker.
const (
	// ddpFirstBucketBytes and ddpBucketBytes are PyTorch
	// DistributedDataParallel's bucket caps: the first bucket 1 MiB
	// (torch.distributed._DEFAULT_FIRST_BUCKET_BYTES), the others
	// bucket_cap_mb = 25.
	ddpFirstBucketBytes = 1 << 20
	ddpBucketBytes      = 25 << 20
	// sgdMomentum is the optimizer's momentum (torch.optim.SGD's), whose
	// buffers are the optimizer state ZeRO-1 shards.
	sgdMomentum = 0.9
)

// newRunConfig maps a plan onto ranks (see placeRanks) and the worker's
// model; with o.scaleDown it keeps the stages but runs one replica of each,
// tp and cp at most 2, with fewer layers, experts and smaller dimensions.
func newRunConfig(p *plan.Plan, o options) (*runConfig, error) {
	kind := p.Execution.Schedule
	where := "execution.schedule"
	if o.schedule != "" {
		kind, where = schedule.Kind(o.schedule), "--schedule"
	}
	if !supported(kind) {
		return nil, fmt.Errorf("%s: %q is not supported by the runner yet (supported: %s; --schedule runs the plan's stages with one of them)", where, kind, supportedList())
	}
	info, err := kind.Info()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if m := p.Execution.RecomputeModules; m != "" && m != model.ModuleCoreAttn.String() {
		return nil, fmt.Errorf("execution.recompute_modules: the runner's selective recomputation reruns the attention core alone (core_attn); this plan has %q", m)
	}
	if err := checkZero(p.Execution.ZeRO); err != nil {
		return nil, err
	}
	if c := p.Execution.CPComm; p.Execution.CP > 1 && c != "" && c != plan.CPCommP2P {
		return nil, fmt.Errorf("execution.cp_comm: %q is not run by the runner yet; its context parallelism is ring attention (p2p)", c)
	}
	if e := p.Execution; e.ExpertTP() != e.TP && (e.EP > 1 || e.ETP > 0) {
		return nil, fmt.Errorf("execution.etp: the runner splits each expert over the %d tensor-parallel ranks and draws expert parallelism from the data × context-parallel ranks (etp = tp = %d); this plan has etp %d", e.TP, e.TP, e.ExpertTP())
	}
	scaleDown := o.scaleDown
	reps := stageReplicas(p, scaleDown)
	// PipeDream feeds replicated stages round-robin (1F1B-RR); the other
	// kinds run equal replicas as parallel pipelines.
	roundRobin := kind == schedule.OneFOneBRR || (kind == schedule.PipeDream && slices.Max(reps) > 1)
	if err := checkRoundRobin(p, roundRobin); err != nil {
		return nil, err
	}
	replicas := reps[0]
	if roundRobin {
		replicas = 1
	} else if i := slices.IndexFunc(reps, func(r int) bool { return r != reps[0] }); i >= 0 {
		return nil, fmt.Errorf("stages[%d].replicas: %s needs equal replicas on every stage (stage 0 has %d, got %d); unequal replication runs under 1f1b-rr or pipedream", i, kind, p.Stages[0].Replicas, p.Stages[i].Replicas)
	}
	if o.verticalSync && (kind != schedule.PipeDream || roundRobin) {
		return nil, fmt.Errorf("--vertical-sync: needs a pipedream schedule without replicated stages, got %s with stage replicas %v", kind, reps)
	}
	// An interleaved plan's stages are its pp·v chunks in model order, a
	// V-shaped kind's its 2·positions chunks; other kinds run every stage of
	// the plan on its own position.
	stages, chunks := len(p.Stages), 1
	if info.VShaped {
		if stages%schedule.VChunks != 0 {
			return nil, fmt.Errorf("stages: %s places %d model chunks on each position in a V, so the plan's %d stages must be a multiple of %d", kind, schedule.VChunks, stages, schedule.VChunks)
		}
		stages, chunks = stages/schedule.VChunks, schedule.VChunks
	}
	if info.Chunked && p.Execution.Interleave > 1 {
		chunks = p.Execution.Interleave
		if stages != p.Execution.PP*chunks {
			return nil, fmt.Errorf("stages: %s with pp %d × interleave %d needs %d model chunks, got %d", kind, p.Execution.PP, chunks, p.Execution.PP*chunks, stages)
		}
		stages = p.Execution.PP
	}
	tp, cp := max(1, p.Execution.TP), max(1, p.Execution.CP)
	if scaleDown {
		tp, cp = min(tp, scaleTP), min(cp, scaleCP)
	}
	c := &runConfig{
		Device: o.device, Backend: "gloo", Schedule: string(kind), Stages: stages, Chunks: chunks, ChunkPositions: chunkPositions(info, stages, chunks), TP: tp,
		SequenceParallel: p.Execution.SequenceParallel && tp > 1, CP: cp, EP: max(1, p.Execution.EP),
		Replicas: replicas, Microbatches: p.Execution.Microbatches(), MicrobatchSize: p.Execution.MicrobatchSize,
		Steps: o.steps, Warmup: o.warmup, LR: 0.05, Momentum: sgdMomentum, ScaledDown: scaleDown,
		Comparable: !scaleDown && kind == p.Execution.Schedule, Batches: 1,
		Zero: p.Execution.ZeRO, OverlapGradReduce: p.Execution.Overlap.GradReduce,
		FirstBucketBytes: ddpFirstBucketBytes, BucketBytes: ddpBucketBytes,
		Recompute: string(p.Execution.Recompute), RecomputeLayers: p.Execution.RecomputeLayers,
	}
	if roundRobin {
		// The replicated input stage takes the whole global batch each step.
		c.Microbatches, c.StageReplicas = p.Execution.GlobalBatch/p.Execution.MicrobatchSize, reps
	}
	if o.device == "cuda" {
		c.Backend = "nccl"
	}
	ranges := make([][2]int, len(p.Stages))
	for s, st := range p.Stages {
		ranges[s] = [2]int{st.FirstLayer, st.LastLayer} // empty (last < first) for an end chunk of the embedding or the output layer alone
	}
	if scaleDown {
		c.Microbatches = min(c.Microbatches, scaleMicrobatches)
		c.MicrobatchSize = min(c.MicrobatchSize, scaleMicrobatchSize)
		ranges = shrinkStages(ranges, scaleLayersPerStage)
	}
	if c.Model, err = newWorkerModel(p, ranges, c, scaleDown); err != nil {
		return nil, err
	}
	if roundRobin && c.Model.Tied && stages > 1 && reps[0] != reps[stages-1] {
		return nil, fmt.Errorf("stages[%d].replicas: a tied embedding's two copies update together, so 1F1B-RR needs as many replicas on the last stage as on the first (%d), got %d; untie the embeddings", stages-1, p.Stages[0].Replicas, p.Stages[stages-1].Replicas)
	}
	sched, err := generate(kind, p, o, c, reps, roundRobin)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	c.schedule, c.Versioning = sched, sched.Versioning.String()
	for _, list := range sched.Devices {
		acts := make([]string, len(list))
		for i, a := range list {
			acts[i] = a.String()
		}
		c.Actions = append(c.Actions, acts)
	}
	c.Ranks = placeRanks(c, replicas, ranges)
	return c, nil
}

// checkZero accepts the ZeRO stages the worker runs: none, or 1 (the
// distributed optimizer: optimizer state sharded over the data-parallel
// replicas, gradients reduce-scattered, parameters all-gathered).
func checkZero(zero int) error {
	if zero > 1 {
		return fmt.Errorf("execution.zero: stage %d (sharded gradients or parameters) is not run by the runner yet; stage 1 runs as the distributed optimizer", zero)
	}
	return nil
}

// generate makes the action lists the worker runs: one step's for a
// flushing schedule, the whole run's (warmup + steps batches) for one
// without flushes; 1F1B-RR's over the run's microbatches.
func generate(kind schedule.Kind, p *plan.Plan, o options, c *runConfig, reps []int, roundRobin bool) (*schedule.Schedule, error) {
	info, err := kind.Info()
	if err != nil {
		return nil, err
	}
	opt := schedule.Options{Stages: c.Stages, Microbatches: c.Microbatches, Chunks: c.Chunks, VerticalSync: o.verticalSync}
	if !info.Flushes() {
		c.Batches = c.Warmup + c.Steps
	}
	switch {
	case roundRobin:
		kind = schedule.OneFOneBRR
		opt.Replicas, opt.Microbatches = reps, c.Microbatches*c.Batches
	case info.MultiBatch:
		opt.Batches = c.Batches
	case kind == schedule.OneFOneBStar:
		if opt.Groups, err = starGroups(p, c.Stages); err != nil {
			return nil, err
		}
	}
	return schedule.Generate(kind, opt)
}

// starGroups are MadPipe's 1F1B* groups of a layer-profile plan's stages
// for the plan's period (predictions.bottleneck_seconds, else
// iteration_seconds), from the profiled layer times; a transformer plan
// has no per-layer times to group by.
func starGroups(p *plan.Plan, stages int) ([]int, error) {
	if p.Model.Profile == nil || len(p.Stages) != stages {
		return nil, fmt.Errorf("1f1b-star: the groups come from a layer profile's times (model.profile), which the plan does not have")
	}
	period := p.Predictions.BottleneckSeconds
	if period <= 0 {
		period = p.Predictions.IterationSeconds
	}
	costs := make([]schedule.StageCost, stages)
	for s, st := range p.Stages {
		for _, l := range p.Model.Profile.Layers[st.FirstLayer : st.LastLayer+1] {
			costs[s].FwdSeconds += l.FwdSeconds
			costs[s].BwdSeconds += l.BwdSeconds
		}
	}
	return schedule.StarGroups(costs, period)
}

// placeRanks lists the ranks: parallel pipelines (rank = ((replica·stages
// + stage)·cp + cp rank)·tp + tp rank, all running their position's list),
// or, with stage replicas (cp 1), stage by stage and replica by replica,
// each replica running its own 1F1B-RR list.
func placeRanks(c *runConfig, replicas int, ranges [][2]int) []rankInfo {
	tp, cp, stageReps := c.TP, c.CP, c.StageReplicas
	var out []rankInfo
	add := func(s, r, device int) {
		var own [][2]int
		for k := range c.Chunks {
			own = append(own, ranges[c.virtualStage(s, k)])
		}
		for x := range cp {
			for t := range tp {
				out = append(out, rankInfo{Rank: len(out), Stage: s, Replica: r, CPRank: x, TPRank: t, Chunks: own, Device: device})
			}
		}
	}
	if stageReps != nil {
		device := 0
		for s, n := range stageReps {
			for r := range n {
				add(s, r, device)
				device++
			}
		}
		return out
	}
	for r := range replicas {
		for s := range c.Stages {
			add(s, r, s)
		}
	}
	return out
}

// checkRoundRobin refuses what the worker does not run with round-robin
// stage replicas (1F1B-RR, or PipeDream with replicated stages): context
// and expert parallelism, whose groups it draws from equal replicas.
func checkRoundRobin(p *plan.Plan, roundRobin bool) error {
	if !roundRobin {
		return nil
	}
	for _, d := range []struct {
		field, what string
		v           int
	}{{"cp", "context", p.Execution.CP}, {"ep", "expert", p.Execution.EP}} {
		if d.v > 1 {
			return fmt.Errorf("execution.%s: %s parallelism (%d) under 1f1b-rr (round-robin stage replicas) is not supported by the runner", d.field, d.what, d.v)
		}
	}
	return nil
}

// chunkPositions places the stages·chunks virtual stages of kind on its
// positions (runConfig.ChunkPositions).
func chunkPositions(kind schedule.KindInfo, stages, chunks int) []int {
	out := make([]int, stages*chunks)
	for vs := range out {
		out[vs] = kind.ChunkDevice(vs, stages)
	}
	return out
}

// virtualStage is the virtual stage of chunk k on position s: the k-th
// that ChunkPositions places there (k·Stages + s looped, the V's s and
// 2·Stages−1−s).
func (c *runConfig) virtualStage(s, k int) int {
	for vs, at := range c.ChunkPositions {
		if at == s {
			if k == 0 {
				return vs
			}
			k--
		}
	}
	return -1 // not reached: every position holds Chunks virtual stages
}

// position is the pipeline position that runs virtual stage vs
// (virtualStage's inverse).
func (c *runConfig) position(vs int) int { return c.ChunkPositions[vs] }

// supported reports whether the worker executes kind k.
func supported(k schedule.Kind) bool { return slices.Contains(supportedKinds, k) }

// supportedList names the kinds the worker executes, e.g. "gpipe or 1f1b".
func supportedList() string {
	names := make([]string, len(supportedKinds))
	for i, k := range supportedKinds {
		names[i] = string(k)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ranksText says how the run's ranks multiply out: "2 stages × 2 replicas
// × tp 1 × cp 1", or under 1F1B-RR, whose stages have replica counts of
// their own (Replicas is 1 there), "2 stages with 2 + 1 replicas × tp 1 × cp 1".
func (c *runConfig) ranksText() string {
	if c.StageReplicas == nil {
		return fmt.Sprintf("%d stages × %d replicas × tp %d × cp %d", c.Stages, c.Replicas, c.TP, c.CP)
	}
	reps := make([]string, len(c.StageReplicas))
	for i, r := range c.StageReplicas {
		reps[i] = strconv.Itoa(r)
	}
	return fmt.Sprintf("%d stages with %s replicas × tp %d × cp %d", c.Stages, strings.Join(reps, " + "), c.TP, c.CP)
}

// stageReplicas is each stage's replica count the runner starts: the
// plan's stage replicas times dp, or 1 when scaling down.
func stageReplicas(p *plan.Plan, scaleDown bool) []int {
	out := make([]int, len(p.Stages))
	for i, s := range p.Stages {
		out[i] = 1
		if !scaleDown {
			out[i] = s.Replicas * p.Execution.DP
		}
	}
	return out
}

// shrinkStages keeps the number of stages and gives each at most perStage
// layers, renumbered contiguously from 0.
func shrinkStages(ranges [][2]int, perStage int) [][2]int {
	out := make([][2]int, len(ranges))
	next := 0
	for s, r := range ranges {
		n := min(r[1]-r[0]+1, perStage)
		out[s] = [2]int{next, next + n - 1}
		next += n
	}
	return out
}

// newWorkerModel describes the model to build: the plan's transformer
// sharded as c says (c.EP lowered to fit when scaling down), or Linear
// layers matching the profile's parameter bytes.
func newWorkerModel(p *plan.Plan, ranges [][2]int, c *runConfig, scaleDown bool) (workerModel, error) {
	m := workerModel{Layers: ranges[len(ranges)-1][1] + 1, Seed: 1}
	if t := p.Model.Transformer; t != nil {
		m, err := transformerModel(m, t, c.TP, scaleDown)
		if err != nil {
			return m, err
		}
		return m, splitDegrees(&m, c, scaleDown)
	}
	for _, d := range []struct {
		field, what string
		v           int
	}{{"tp", "tensor", c.TP}, {"cp", "context", c.CP}, {"ep", "expert", c.EP}} {
		if d.v > 1 {
			return m, fmt.Errorf("execution.%s: %s parallelism (%d) needs a transformer model; a layer-profile plan has no layers to split", d.field, d.what, d.v)
		}
	}
	m.Kind, m.Width = "profile", profileWidth
	if scaleDown {
		m.Width = scaleProfileWidth
	}
	// Map each run layer to a plan layer: the stage's first layers when shrunk.
	for s, r := range ranges {
		for i := range r[1] - r[0] + 1 {
			j := p.Stages[s].FirstLayer + i
			bytes := p.Model.Profile.Layers[j].ParameterBytes
			if !(bytes >= 0 && bytes <= maxLayerBytes) {
				return m, fmt.Errorf("model.profile.layers[%d].parameter_bytes: must be in [0, %g], got %v", j, float64(maxLayerBytes), bytes)
			}
			if scaleDown {
				bytes = min(bytes, scaleLayerBytes)
			}
			// Two Linear(width, k) layers hold 2·width·k weights (biases aside).
			m.Bottleneck = append(m.Bottleneck, max(1, int(bytes/(2*fp32Bytes*float64(m.Width)))))
		}
	}
	return m, nil
}

// scaledGroups returns the experts' group limit for the scaled-down
// experts: the most groups, at most the model's, that divide them and
// hold the top-k in group top-k of them; none where fewer than 2 remain.
func scaledGroups(groups, groupTopK, experts, topk int) (int, int) {
	g := min(groups, experts)
	for g >= 2 && experts%g != 0 {
		g--
	}
	if g < 2 {
		return 0, 0
	}
	size := experts / g
	return g, min(g, max(groupTopK, (topk+size-1)/size))
}

// transformerModel fills m with t's dimensions and architecture, shrunk
// under scaleDown, and checks that tp divides what it splits.
func transformerModel(m workerModel, t *model.Transformer, tp int, scaleDown bool) (workerModel, error) {
	if t.MLA != nil {
		return m, fmt.Errorf("model.transformer.mla: multi-head latent attention is not run by the runner yet")
	}
	if t.SlidingLayers > 0 {
		return m, fmt.Errorf("model.transformer.sliding_layers: sliding-window attention is not run by the runner yet, got %d windowed layers", t.SlidingLayers)
	}
	if t.MTPLayers > 0 {
		return m, fmt.Errorf("model.transformer.mtp_layers: multi-token prediction is not run by the runner yet, got %d modules (plan with MTP layers 0)", t.MTPLayers)
	}
	if t.ChunkedLayers > 0 && t.AttentionChunk < t.Seq {
		return m, fmt.Errorf("model.transformer.chunked_layers: chunked attention (chunks of %d tokens) is not run by the runner, got %d chunked layers over sequences of %d (plan at a sequence up to the chunk)", t.AttentionChunk, t.ChunkedLayers, t.Seq)
	}
	m.Kind, m.Hidden, m.Heads, m.KVHeads, m.HeadDim = "transformer", t.Hidden, t.Heads, t.KVHeads, t.HeadDim
	m.Seq, m.FFN, m.Vocab, m.Gated, m.Tied = t.Seq, t.FFN, t.Vocab, t.GatedFFN, !t.UntiedEmbeddings
	m.Norm, m.Bias, m.Position = "layernorm", "all", "learned"
	if t.Norm == model.NormRMS {
		m.Norm = "rmsnorm"
	}
	if t.Bias == model.BiasNone || t.Bias == model.BiasQKV {
		m.Bias = t.Bias
	}
	if t.PositionEmbedding == model.PositionNone {
		m.Position = "rope"
	}
	if m.FFN == 0 {
		m.FFN = 4 * m.Hidden
	}
	if m.KVHeads == 0 {
		m.KVHeads = m.Heads
	}
	m.Precision = string(t.Precision)
	if m.Precision == "" {
		m.Precision = string(model.BF16)
	}
	if e := t.MoE; e != nil {
		m.Experts, m.TopK, m.ExpertFFN, m.SharedExperts, m.FirstDense, m.MoEEvery = e.Experts, e.TopK, e.FFN, e.SharedExperts, e.FirstDense, e.Every
		m.ExpertGroups, m.GroupTopK = e.Groups, e.GroupTopK
		if m.ExpertFFN == 0 {
			m.ExpertFFN = m.FFN
		}
	}
	if scaleDown {
		gqa := m.KVHeads < m.Heads
		m.Heads = max(1, min(m.Heads, scaleHeads))
		m.Hidden = max(m.Heads, min(m.Hidden, scaleHidden)/m.Heads*m.Heads)
		m.HeadDim, m.KVHeads = 0, m.Heads
		if gqa && m.Heads%2 == 0 {
			m.KVHeads = max(tp, m.Heads/2)
		}
		m.Seq = max(1, min(m.Seq, scaleSeq))
		m.FFN = max(tp, min(m.FFN, 4*m.Hidden)/tp*tp)
		m.Vocab = max(1, min(m.Vocab, scaleVocab))
		if m.Experts > 0 {
			m.Experts = min(m.Experts, scaleExperts)
			m.TopK = min(m.TopK, m.Experts)
			m.ExpertFFN = max(tp, min(m.ExpertFFN, 4*m.Hidden)/tp*tp)
			m.FirstDense = min(m.FirstDense, m.Layers-1)
			m.MoEEvery = min(m.MoEEvery, m.Layers-m.FirstDense) // some layer past FirstDense stays an expert one
			m.ExpertGroups, m.GroupTopK = scaledGroups(m.ExpertGroups, m.GroupTopK, m.Experts, m.TopK)
		}
	}
	if m.HeadDim == 0 {
		if m.Hidden < 1 || m.Heads < 1 || m.Hidden%m.Heads != 0 {
			return m, fmt.Errorf("model.transformer: hidden (%d) must be a positive multiple of heads (%d)", m.Hidden, m.Heads)
		}
		m.HeadDim = m.Hidden / m.Heads
	}
	for _, c := range []struct {
		field string
		v     int
	}{{"heads", m.Heads}, {"kv_heads", m.KVHeads}, {"ffn", m.FFN}, {"moe.ffn", max(tp, m.ExpertFFN)}} {
		if c.v < 1 || c.v%tp != 0 {
			return m, fmt.Errorf("model.transformer.%s: %d must be a positive multiple of execution.tp (%d), which splits it", c.field, c.v, tp)
		}
	}
	switch {
	case m.Heads%m.KVHeads != 0:
		return m, fmt.Errorf("model.transformer.kv_heads: %d must divide heads (%d)", m.KVHeads, m.Heads)
	case m.Position == "rope" && m.HeadDim%2 != 0:
		return m, fmt.Errorf("model.transformer.head_dim: rotary position embedding needs an even head size, got %d", m.HeadDim)
	case m.Seq < 1:
		return m, fmt.Errorf("model.transformer.seq: must be >= 1, got %d", m.Seq)
	case m.Vocab < 1:
		return m, fmt.Errorf("model.transformer.vocab: must be >= 1, got %d", m.Vocab)
	case m.Experts > maxExperts:
		return m, fmt.Errorf("model.transformer.moe.experts: the runner runs at most %d experts per layer, got %d", maxExperts, m.Experts)
	case m.Experts > 0 && (m.TopK < 1 || m.TopK > m.Experts):
		return m, fmt.Errorf("model.transformer.moe.topk: must be in [1, experts %d], got %d", m.Experts, m.TopK)
	case m.Experts > 0 && (m.SharedExperts < 0 || m.FirstDense < 0):
		return m, fmt.Errorf("model.transformer.moe: shared_experts (%d) and first_dense (%d) must be >= 0", m.SharedExperts, m.FirstDense)
	}
	m.PaddedVocab = (m.Vocab + tp - 1) / tp * tp
	return m, nil
}

// splitDegrees checks that the model splits as the run's degrees need:
// experts over ep (ep dividing the replicas × cp ranks it is drawn from),
// the sequence into 2·cp chunks (Megatron-LM's load-balanced causal split),
// each chunk pair over tp under sequence parallelism. Scaling down, it
// lowers ep to fit and rounds the sequence to a multiple of what splits it.
func splitDegrees(m *workerModel, c *runConfig, scaleDown bool) error {
	width := c.Replicas * c.CP
	if scaleDown && m.Experts > 0 {
		for c.EP > 1 && (m.Experts%c.EP != 0 || width%c.EP != 0) {
			c.EP--
		}
	}
	switch {
	case c.EP > 1 && m.Experts == 0:
		return fmt.Errorf("execution.ep: expert parallelism (%d) needs a mixture-of-experts model (model.transformer.moe)", c.EP)
	case c.EP > 1 && m.Experts%c.EP != 0:
		return fmt.Errorf("execution.ep: %d must divide model.transformer.moe.experts (%d)", c.EP, m.Experts)
	case c.EP > 1 && width%c.EP != 0:
		return fmt.Errorf("execution.ep: %d must divide the data × context-parallel ranks it is drawn from (%d replicas × cp %d = %d)", c.EP, c.Replicas, c.CP, width)
	}
	unit, why := 1, []string{}
	if c.CP > 1 {
		unit, why = 2*c.CP, append(why, fmt.Sprintf("2·cp = %d load-balanced chunks", 2*c.CP))
	}
	if c.SequenceParallel {
		unit, why = unit*c.TP, append(why, fmt.Sprintf("split over tp %d by sequence parallelism", c.TP))
	}
	if scaleDown {
		m.Seq = max(unit, m.Seq/unit*unit)
	}
	if m.Seq%unit != 0 {
		return fmt.Errorf("model.transformer.seq: %d must be a multiple of %d (%s)", m.Seq, unit, strings.Join(why, ", "))
	}
	return nil
}
