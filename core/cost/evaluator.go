package cost

import (
	"fmt"
	"slices"

	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// DefaultMemoryBandwidthEfficiency is the fraction of peak memory bandwidth
// that memory-bound kernels (layer norm, dropout, GeLU, softmax, optimizer
// step) reach by default.
const DefaultMemoryBandwidthEfficiency = 0.7

// ElementwiseTrafficPerActivationByte is how many bytes of memory traffic the
// memory-bound kernels of a layer's forward pass move per byte of activation
// the layer stores: each stored tensor is written once and read once. The
// backward pass moves twice as much.
const ElementwiseTrafficPerActivationByte = 1

// DefaultReserve returns the memory kept back on a GPU of capacityBytes for
// what the framework does not account to the model: 1 GiB for the CUDA
// context, cuBLAS workspaces and NCCL buffers, plus 5 % of capacity for
// allocator fragmentation.
func DefaultReserve(capacityBytes float64) float64 {
	return 1<<30 + 0.05*capacityBytes
}

// evaluator holds the validated inputs of one prediction and the derived
// constants every stage shares.
type evaluator struct {
	tr             model.Transformer
	c              hw.Cluster
	cfg            plan.Execution // with WithDefaults applied
	kind           schedule.KindInfo
	chunks         int     // model chunks per device (plan.Execution.Chunks)
	bubbleFraction float64 // the schedule's analytic bubble over ideal time
	w              float64 // bytes per value
	peak           float64 // FLOP/s of the linear layers' GEMMs at the training precision
	memBW          float64 // achievable memory bandwidth, bytes/s
	curve          EfficiencyCurve
	wide           float64         // FLOP/s of what FP8 training keeps in bf16 (attention core, output layer); peak otherwise
	wideCurve      EfficiencyCurve // its efficiency
	waveSMs        float64         // the GPU's wave of tiles where GEMMs are quantized into waves (waveSMs); 0: none
	attnFwd        float64         // the fused attention core's forward FLOP/s (FusedAttentionFLOPS); 0: the GEMM curve
	attnBwd        float64         // and its backward's
	comm           Comm
	reserve        float64
	m              int        // microbatches per pipeline and step
	perParam       StateBytes // bytes per parameter before ZeRO sharding
	state          StateBytes // per-GPU bytes per parameter after ZeRO sharding over d·cp
	expertState    StateBytes // the same for routed experts, sharded over their data-parallel group edp
	etp            int        // expert tensor parallelism (see expertGrid)
	expertSec      float64    // time per local expert, MoE layer and microbatch (DefaultExpertSeconds)
	epExposed      float64    // share of the overlapped expert exchange left exposed (DefaultEPOverlapExposed)
	p2pExposed     float64    // share of the interleaved schedule's pipeline sends left exposed (DefaultP2PExposed)
	expertGEMMRate float64    // the routed experts' GEMMs' share of the curve's rate (FP8ExpertGEMMFraction in FP8, else 1)
	edp            int        // expert data parallelism (see expertGrid)
	gradBytes      float64    // bytes of one unsharded gradient value
	actOpts        model.ActivationOptions
	tpBW           float64
	ppBW           float64
	dpBW           float64
	edpBW          float64 // the expert data-parallel group's (expertGrid)
	etpBW          float64 // the expert tensor-parallel group's (expertGrid)
	embBW          float64
	intraBW        float64
	boundary       float64 // bytes of one microbatch's boundary activation per GPU
	cpBW           float64
	epBW           float64
	kindTime       [2]layerTime // per kind of layer (layerKind), per microbatch on one GPU
	plainTime      [2]layerTime // the same without recomputation, where only some layers recompute (layerMix; plainLayerTimes)
	plainSet       bool         // plainTime is set
	partial        bool         // only the first recomputeN layers of each chunk recompute (partialRecompute)
	recomputeN     int
	leading        [][][2]float64 // per device, its layers of each kind among the first n of its chunks (layOut)
	kindSize       [2]layerSize   // per kind of layer
	devLayers      [][]int        // the layers each pipeline device holds (layerIndices)
	devWeights     []devParams    // each device's parameters (weightParams, linearWeights)
	runs           []stageRun     // the devices in runs that cost the same (stageRuns)
	memo           *Predictor     // what this evaluation shares with others of the same model and cluster
}

// layerSize is one layer's size on one GPU: its activation memory per
// microbatch, what the execution's recomputation keeps and all of it, and
// its parameters.
type layerSize struct {
	kept, full float64
	params     float64 // the layer's parameters (model.Transformer.LayerParamsAt)
}

// newEvaluator validates the inputs and fills in the defaults of opt.
func newEvaluator(tr model.Transformer, c hw.Cluster, cfg plan.Execution, opt Options) (*evaluator, error) {
	p, err := NewPredictor(tr, c, opt)
	if err != nil {
		return nil, err
	}
	return evaluatorFor(p, cfg)
}

// baseEvaluator is the part of every evaluator of tr on c with options opt
// that no execution changes: the GPU's rates and efficiency curves at the
// training precision, the communication model, the achievable memory
// bandwidth, the time per local expert and the memory reserve, with opt's
// values checked. NewPredictor computes it once; its error, if any, is
// every evaluation's after the execution's own (evaluatorFor).
func baseEvaluator(tr model.Transformer, c hw.Cluster, opt Options, pred *Predictor) (evaluator, error) {
	e := evaluator{tr: tr, c: c, comm: DefaultComm, memo: pred, waveSMs: waveSMs(c.GPU)}
	e.w, _ = tr.BytesPerValue()
	var err error
	if e.peak, err = c.GPU.Peak(string(tr.TrainingPrecision())); err != nil {
		return e, fmt.Errorf("cluster.gpu: %w", err)
	}
	if opt.Efficiency != nil {
		if err := opt.Efficiency.Validate(); err != nil {
			return e, err
		}
		e.curve = *opt.Efficiency
	} else if e.curve, err = DefaultEfficiency(c.GPU, string(tr.TrainingPrecision())); err != nil {
		return e, err
	}
	e.wide, e.wideCurve = e.peak, e.curve
	if tr.TrainingPrecision() == model.FP8 {
		// Transformer Engine: FP8 GEMMs in the linear layers only; the
		// attention core and the output layer stay in bf16.
		if e.wide, err = c.GPU.Peak(hw.PrecisionBF16); err != nil {
			return e, fmt.Errorf("cluster.gpu: %w", err)
		}
		if e.wideCurve, err = DefaultEfficiency(c.GPU, hw.PrecisionBF16); err != nil {
			return e, err
		}
	}
	if opt.Comm != nil {
		if err := opt.Comm.validate(); err != nil {
			return e, err
		}
		e.comm = *opt.Comm
	}
	memEff := DefaultMemoryBandwidthEfficiency
	if opt.MemoryBandwidthEfficiency != 0 {
		if !(opt.MemoryBandwidthEfficiency > 0 && opt.MemoryBandwidthEfficiency <= 1) {
			return e, fmt.Errorf("options.memory_bandwidth_efficiency: must be in (0, 1], got %v", opt.MemoryBandwidthEfficiency)
		}
		memEff = opt.MemoryBandwidthEfficiency
	}
	if c.GPU.MemoryBandwidthBytesPerSec <= 0 {
		return e, fmt.Errorf("cluster.gpu.memory_bandwidth_bytes_per_sec: unknown for %s; needed for memory-bound kernels", c.GPU.ID)
	}
	e.memBW = c.GPU.MemoryBandwidthBytesPerSec * memEff
	e.expertSec = DefaultExpertSeconds
	if opt.ExpertSeconds != nil {
		if !(*opt.ExpertSeconds >= 0 && *opt.ExpertSeconds < 1) {
			return e, fmt.Errorf("options.expert_seconds: must be in [0, 1), got %v", *opt.ExpertSeconds)
		}
		e.expertSec = *opt.ExpertSeconds
	}
	e.epExposed = DefaultEPOverlapExposed
	if opt.EPOverlapExposed != nil {
		if !(*opt.EPOverlapExposed >= 0 && *opt.EPOverlapExposed <= 1) {
			return e, fmt.Errorf("options.ep_overlap_exposed: must be in [0, 1], got %v", *opt.EPOverlapExposed)
		}
		e.epExposed = *opt.EPOverlapExposed
	}
	e.p2pExposed = DefaultP2PExposed
	if opt.P2PExposed != nil {
		if !(*opt.P2PExposed >= 0 && *opt.P2PExposed <= 1) {
			return e, fmt.Errorf("options.p2p_exposed: must be in [0, 1], got %v", *opt.P2PExposed)
		}
		e.p2pExposed = *opt.P2PExposed
	}
	fp8Experts := FP8ExpertGEMMFraction
	if f := opt.FP8ExpertGEMMFraction; f != nil {
		if !(*f > 0 && *f <= 1) {
			return e, fmt.Errorf("options.fp8_expert_gemm_fraction: must be in (0, 1], got %v", *f)
		}
		fp8Experts = *f
	}
	e.expertGEMMRate = 1
	if tr.TrainingPrecision() == model.FP8 {
		e.expertGEMMRate = fp8Experts
	}
	e.reserve = DefaultReserve(c.GPU.MemoryBytes)
	if opt.ReserveBytes != 0 {
		if !(opt.ReserveBytes > 0 && opt.ReserveBytes < c.GPU.MemoryBytes) {
			return e, fmt.Errorf("options.reserve_bytes: must be in (0, %v), got %v", c.GPU.MemoryBytes, opt.ReserveBytes)
		}
		e.reserve = opt.ReserveBytes
	}
	return e, nil
}

// evaluatorFor validates cfg against pred's model and cluster (validated
// by NewPredictor) and fills in the defaults of pred's options, taking
// what cfg shares with earlier executions from pred. The evaluator is
// pred's own, valid until pred's next evaluation.
func evaluatorFor(pred *Predictor, cfg plan.Execution) (*evaluator, error) {
	tr, c := pred.tr, pred.c
	if err := Validate(tr, c, cfg); err != nil {
		return nil, err
	}
	if pred.baseErr != nil {
		return nil, pred.baseErr
	}
	cfg = WithDefaults(cfg)
	e := &pred.scratch
	*e = pred.base
	e.cfg = cfg
	e.kind, _ = cfg.Schedule.Info() // Validate checked the kind
	e.chunks = e.kind.Chunks(cfg.Interleave)
	if cfg.FlashAttention {
		// The fused kernels run over each context-parallel rank's s/cp
		// tokens.
		e.attnFwd, e.attnBwd = pred.fusedAttention(cfg.CP, cfg.AttentionKernel)
	}
	opti, _ := ParseOptimizer(cfg.Optimizer)
	perParam, err := opti.BytesPerParam(e.w)
	if err != nil {
		return nil, err
	}
	e.perParam, e.gradBytes = perParam, perParam.Gradients
	if e.state, err = perParam.Shard(cfg.ZeRO, cfg.DP*cfg.CP); err != nil {
		return nil, fmt.Errorf("execution.%w", err)
	}
	e.etp, e.edp = expertGrid(cfg)
	if e.expertState, err = perParam.Shard(cfg.ZeRO, e.edp); err != nil {
		return nil, fmt.Errorf("execution.%w", err)
	}
	modules, _ := model.ParseRecomputeModules(cfg.RecomputeModules) // Validate checked them
	e.actOpts = model.ActivationOptions{TP: cfg.TP, SequenceParallel: cfg.SequenceParallel, Recompute: cfg.Recompute, Modules: modules, FlashAttention: cfg.FlashAttention, CP: cfg.CP}
	e.m = microbatches(cfg)
	e.bubbleFraction, _ = cfg.Schedule.Bubble(cfg.PP, e.m, cfg.Interleave) // Validate checked it
	// Rank order, innermost first: t, cp, d, p (Megatron-LM's tp-cp-dp-pp);
	// expert parallelism takes ep of the cp·d ranks, or, folded, of the
	// t·cp·d ranks starting with the tensor-parallel ones; the experts'
	// data-parallel group is the edp ranks etp·ep apart (expertGrid).
	t, cp, d, p := cfg.TP, cfg.CP, cfg.DP, cfg.PP
	e.tpBW = c.GroupBandwidthBytesPerSec(t, 1)
	e.cpBW = c.GroupBandwidthBytesPerSec(cp, t)
	e.epBW = c.GroupBandwidthBytesPerSec(cfg.EP, e.etp)
	e.etpBW = c.GroupBandwidthBytesPerSec(e.etp, 1)
	// Data-parallel collectives are rings over every network interface of
	// the group's GPUs in a server (RingBandwidthBytesPerSec).
	e.dpBW = c.RingBandwidthBytesPerSec(d*cp, t)
	e.edpBW = c.RingBandwidthBytesPerSec(e.edp, e.etp*cfg.EP)
	e.ppBW = c.GroupBandwidthBytesPerSec(2, t*cp*d)
	e.embBW = c.GroupBandwidthBytesPerSec(2, t*cp*d*(p-1))
	e.intraBW = c.Levels[0].BandwidthBytesPerSec
	e.boundary = float64(cfg.MicrobatchSize) * float64(tr.Seq) / float64(cp) * float64(tr.Hidden) * e.w
	if cfg.SequenceParallel {
		e.boundary /= float64(t)
	}
	e.kindTime, e.kindSize = pred.layerCosts(e)
	e.partial, e.recomputeN = partialRecompute(cfg), cfg.RecomputeLayers
	var runs layoutRuns
	e.devLayers, e.devWeights, e.leading, runs = pred.layout(e)
	e.runs = runs.all
	if e.partial {
		e.runs = runs.partial
	}
	return e, nil
}

// costLayers returns the time and size of one layer of each kind
// (layerKind) under e's execution.
func (e *evaluator) costLayers() (time [2]layerTime, size [2]layerSize) {
	full := e.actOpts
	full.Recompute = model.RecomputeNone
	for _, i := range e.tr.LayerOfEachKind() {
		k, b := e.layerKind(i), e.cfg.MicrobatchSize
		time[k] = e.layerTime(i, e.memo.layerWork(e, i))
		size[k] = layerSize{kept: e.tr.LayerActivationBytesAt(b, i, e.actOpts), full: e.tr.LayerActivationBytesAt(b, i, full), params: e.tr.LayerParamsAt(i)}
	}
	return time, size
}

// devParams are one pipeline device's parameters per GPU: dense (replicated
// over the d·cp data-parallel ranks) and routed-expert ones (weightParams),
// and of each the linear layers' weights (linearWeights); how many of its
// layers are of each kind (layerKind), and the largest layer's linear
// weights (what ZeRO-3 gathers whole at once).
type devParams struct {
	dense, experts       float64
	linDense, linExperts float64
	layers               [2]float64
	largestLinear        float64
}

// layOut returns the layers each pipeline device of e's execution holds
// and its parameters (devParams), setting e.devLayers first:
// countWeightParams reads them; and for each device, how many of its
// layers of each kind sit among the first n of its chunks, n from 0 to
// its longest chunk's layers (what recomputes when only the first n of
// each chunk do: layerMix).
func (e *evaluator) layOut() (devLayers [][]int, devWeights []devParams, leading [][][2]float64) {
	chunks := ExecutionLayers(e.tr, e.cfg)
	starts := make([]int, len(chunks)) // each chunk's first layer
	for k := 1; k < len(chunks); k++ {
		starts[k] = starts[k-1] + chunks[k-1]
	}
	all := make([]int, 0, e.tr.Layers) // one backing array, a slice per device
	e.devLayers = make([][]int, e.cfg.PP)
	counts := make([][2]float64, 0, e.cfg.PP*(slices.Max(chunks)+1)) // leading's backing array
	leading = make([][][2]float64, e.cfg.PP)
	for i := range e.devLayers {
		from, lead := len(all), len(counts)
		counts = counts[:lead+1] // none before the first
		for _, k := range e.deviceChunks(i) {
			for j := starts[k]; j < starts[k]+chunks[k]; j++ {
				all = append(all, j)
				at := lead + j - starts[k] + 1 // the entry of the layer's position in its chunk (from 1)
				if at == len(counts) {
					counts = append(counts, [2]float64{})
				}
				counts[at][e.layerKind(j)]++
			}
		}
		e.devLayers[i] = all[from:len(all):len(all)]
		leading[i] = counts[lead:len(counts):len(counts)]
		for n := 1; n < len(leading[i]); n++ { // counts per position, summed
			leading[i][n][0] += leading[i][n-1][0]
			leading[i][n][1] += leading[i][n-1][1]
		}
	}
	devWeights = make([]devParams, e.cfg.PP)
	for i := range devWeights {
		w := &devWeights[i]
		w.dense, w.experts = e.countWeightParams(i)
		for _, l := range e.devLayers[i] {
			d, x := e.linearParams(l)
			w.linDense, w.linExperts = w.linDense+d, w.linExperts+x
			w.layers[e.layerKind(l)]++
			w.largestLinear = max(w.largestLinear, d+x)
		}
	}
	if n := float64(e.tr.MTPLayers); n > 0 {
		// The multi-token prediction modules run on the output layer's
		// device (Megatron-Core's post-process stage), each a layer of the last
		// layer's kind and its projection from 2h to h.
		w, last := &devWeights[e.outputDevice()], e.tr.Layers-1
		d, x := e.linearParams(last)
		w.layers[e.layerKind(last)] += n
		w.linDense += n * (d + e.mtpProjectionParams())
		w.linExperts += n * x
		w.largestLinear = max(w.largestLinear, d+x)
	}
	return e.devLayers, devWeights, leading
}

// partialRecompute reports whether only some layers of each chunk
// recompute (full recomputation with plan.Execution.RecomputeLayers):
// those run as e.kindTime and e.kindSize.kept have them, the rest as
// e.plainTime and e.kindSize.full (layerMix).
func partialRecompute(cfg plan.Execution) bool {
	return cfg.Recompute == model.RecomputeFull && cfg.RecomputeLayers > 0
}

// plainLayerTimes returns the time of one layer of each kind without
// recomputation (e.plainTime), computed on first use: only the time of an
// execution whose layers recompute in part needs it.
func (e *evaluator) plainLayerTimes() *[2]layerTime {
	if !e.plainSet {
		plain := *e
		plain.cfg.Recompute, plain.cfg.RecomputeLayers, plain.actOpts.Recompute = model.RecomputeNone, 0, model.RecomputeNone
		e.plainTime, _ = e.memo.layerCosts(&plain)
		e.plainSet = true
	}
	return &e.plainTime
}

// layerMix returns how many of device i's layers of kind k run with the
// execution's recomputation and how many without any: all and none,
// unless only the first e.recomputeN of each chunk recompute (e.partial).
// Multi-token prediction layers never do.
func (e *evaluator) layerMix(i, k int) (recomputing, plain float64) {
	n := e.devWeights[i].layers[k]
	if !e.partial {
		return n, 0
	}
	lead := e.leading[i]
	r := lead[min(e.recomputeN, len(lead)-1)][k]
	return r, n - r
}

// mtpProjectionParams returns one multi-token prediction module's
// projection from 2h to h on one GPU: a column-parallel linear layer
// (Megatron-Core's eh_proj), split over t.
func (e *evaluator) mtpProjectionParams() float64 {
	h := float64(e.tr.Hidden)
	return 2 * h * h / float64(e.cfg.TP)
}

// stageRun is a run of consecutive pipeline devices, first to first+n−1,
// that cost the same: the same layers' kinds and parameters (devParams),
// neither end device but alone (the first holds the embedding, the last
// the output layer, and each exchanges with one neighbour). Such devices
// take the same time per microbatch, and memory that differs only by what
// the schedule keeps in flight, which never grows with the device's index
// (schedule.Kind.InFlight; in a V never shrinks): the first of a run (in a
// V the last) is its most loaded (mostLoadedOf).
type stageRun struct{ first, n int }

// stageRuns groups p devices' parameters into stageRuns, in order; with
// leading (layOut's) also by where each kind of layer sits in the
// devices' chunks, which sets what recomputes when only some layers do.
func stageRuns(w []devParams, leading [][][2]float64) []stageRun {
	p := len(w)
	runs := make([]stageRun, 0, 4)
	for i := range w {
		if k := len(runs) - 1; k >= 0 {
			r := &runs[k]
			if r.first != 0 && i != p-1 && w[i] == w[r.first] && (leading == nil || slices.Equal(leading[i], leading[r.first])) {
				r.n++
				continue
			}
		}
		runs = append(runs, stageRun{first: i, n: 1})
	}
	return runs
}

// expertGrid returns the expert layers' tensor- and data-parallel sizes
// under Megatron-Core's MoE parallel folding (Liu et al. 2025, "MoE
// Parallel Folding"), where the experts' own grid etp × ep × edp covers the
// same t·cp·d ranks as the attention's t × cp × d, innermost first: etp is
// plan.Execution.ExpertTP — by default 1 with expert parallelism, each
// expert whole on its rank, as Megatron-Bridge's MoE recipes
// (expert_tensor_parallel_size 1 in scripts/performance/configs/qwen/
// qwen3_workload_base_configs.py) and the Megatron-MoE-ModelZoo best
// practices (ETP 1 in every row of best_practice/Qwen3/readme.md) run
// them, and t without, the experts split over the tensor-parallel ranks
// like a dense MLP — and edp = t·cp·d/(etp·ep).
func expertGrid(cfg plan.Execution) (etp, edp int) {
	etp = cfg.ExpertTP()
	return etp, cfg.TP * cfg.DP * cfg.CP / (etp * cfg.EP)
}

// expertsOnTPGrid reports whether the routed experts run as a dense MLP
// does, split over the t tensor-parallel ranks of their own tokens
// (no expert parallelism, etp = t), so the MLP block's tensor-parallel
// collectives carry them; otherwise the dispatcher moves their tokens
// (epSeconds, etpSeconds).
func (e *evaluator) expertsOnTPGrid() bool {
	return e.cfg.EP == 1 && e.etp == e.cfg.TP
}

// validate checks a communication model.
func (c Comm) validate() error {
	if !(c.BandwidthEfficiency > 0 && c.BandwidthEfficiency <= 1) {
		return fmt.Errorf("options.comm.bandwidth_efficiency: must be in (0, 1], got %v", c.BandwidthEfficiency)
	}
	if !(c.LatencySeconds >= 0 && c.LatencySeconds < 1) {
		return fmt.Errorf("options.comm.latency_seconds: must be in [0, 1), got %v", c.LatencySeconds)
	}
	return nil
}

// ChunkLayers splits l layers into the given number of model chunks
// (pipeline stages times interleaved chunks, in model order) as evenly as
// possible, the chunks that get one layer fewer taken from both ends, the
// first chunk first: the first and last chunks also hold the embedding and
// the output layer, and the first stage stashes the most microbatches
// (Megatron-LM's --decoder-first/last-pipeline-num-layers; the Llama 3
// paper §3.3.2 gives the first and last of 16 stages one layer fewer for
// 126 layers). It returns the layers of each chunk.
func ChunkLayers(l, chunks int) []int {
	n := (l + chunks - 1) / chunks
	short := chunks*n - l
	out := make([]int, chunks)
	for k := range out {
		out[k] = n
		if k < (short+1)/2 || chunks-1-k < short/2 {
			out[k]--
		}
	}
	return out
}

// SplitLayers returns the layers of each of tr's model chunks (pipeline
// stages times interleaved chunks, in model order): ChunkLayers, and with
// multi-token prediction (tr.MTPLayers) the last chunk, which runs the
// modules, gives up the layers their work amounts to (MTPChunkLayers) to
// the chunks ChunkLayers shortened at the front, the innermost first,
// while it has layers and they have room; the stages then peak at the
// layers they had. Megatron-Bridge lays DeepSeek-V3 out so
// (deepseek_v3.py and its performance configs): on 16 stages
// "Et*4|(t*4|)*14tmL", where ChunkLayers gives 3, 3, 4, …, 4, 3; on 32
// chunks "Et|(tt|)*30mL", where it gives 1, 1, 2, …, 2, 1.
func SplitLayers(tr model.Transformer, chunks int) []int {
	return moveMTPLayers(tr, ChunkLayers(tr.Layers, chunks))
}

// VChunkLayers splits l layers into the 2p model chunks of a V-shaped
// schedule (device d runs chunks d and 2p−1−d, schedule.ZBVStages) as
// evenly as possible: of the chunks that get one layer fewer, first the
// model's two ends, both on device 0 with the embedding and the output
// layer (torchtitan's first_ and last_stage_less_layers, which is how the
// engine that runs ZB-V splits: launch's torchtitan export), then one of
// each next device going down the V, then their second coming back up. It
// returns the layers of each chunk, in model order.
func VChunkLayers(l, p int) []int {
	chunks := 2 * p
	n := (l + chunks - 1) / chunks
	out := make([]int, chunks)
	for k := range out {
		out[k] = n
	}
	order := make([]int, 0, chunks) // the chunks to shorten, in turn
	order = append(order, 0, chunks-1)
	for k := 1; k < p; k++ {
		order = append(order, k)
	}
	for k := chunks - 2; k >= p; k-- {
		order = append(order, k)
	}
	for _, k := range order[:chunks*n-l] {
		out[k]--
	}
	return out
}

// ExecutionLayers returns the layers of each model chunk ex lays tr out
// in, pp × ex.Chunks() of them in model order: SplitLayers where the
// chunks loop over the devices, VChunkLayers (with multi-token prediction
// moved as SplitLayers moves it) in a V.
func ExecutionLayers(tr model.Transformer, ex plan.Execution) []int {
	if kind, err := ex.Schedule.Info(); err == nil && kind.VShaped {
		return moveMTPLayers(tr, VChunkLayers(tr.Layers, ex.PP))
	}
	return SplitLayers(tr, ex.PP*ex.Chunks())
}

// moveMTPLayers moves, with multi-token prediction, layers from the last
// chunk of out to the shorter ones before it (SplitLayers).
func moveMTPLayers(tr model.Transformer, out []int) []int {
	last := len(out) - 1
	if tr.MTPLayers == 0 || last == 0 {
		return out
	}
	top := slices.Max(out)
	move := min(MTPChunkLayers(tr), out[last])
	for k := last - 1; k >= 0 && move > 0; k-- {
		if out[k] < top {
			out[k]++
			out[last]--
			move--
		}
	}
	return out
}

// MTPChunkLayers returns how many of tr's layers the work of its
// multi-token prediction modules amounts to: their forward FLOPs
// (model.Transformer.MTPFwdFLOPs: a layer, the projection and a pass
// through the output layer each) over one last layer's, rounded down.
// DeepSeek-V3's one module comes to 2 (its output layer alone outweighs a
// layer's active FLOPs), as Megatron-Bridge's layouts take it.
func MTPChunkLayers(tr model.Transformer) int {
	if tr.MTPLayers == 0 {
		return 0
	}
	return int(float64(tr.MTPLayers) * tr.MTPFwdFLOPs(1) / tr.LayerFwdFLOPs(1, tr.Layers-1))
}

// MaxChunks returns the most model chunks (pipeline stages times
// interleaved chunks) a model of the given layers splits into: one layer
// each, plus a first chunk holding only the embedding and a last holding
// only the output layer and loss, as the Llama 3 paper (§3.3.2: 126 layers
// on 16 stages, "the first model chunk on the first stage has only the
// embedding") and Megatron-LM's --account-for-embedding-in-pipeline-split
// and --account-for-loss-in-pipeline-split lay them out. ChunkLayers gives
// those end chunks no layers.
func MaxChunks(layers int) int { return layers + 2 }

// layerKind returns 1 for a mixture-of-experts layer and 0 for a dense
// one: layers of a kind cost the same.
func (e *evaluator) layerKind(i int) int { return int(e.memo.kinds[i]) }

// deviceChunks returns the model chunks device i holds, in order, of the
// p·chunks ExecutionLayers splits the layers into: k = i + c·p where they
// loop, i and 2p−1−i in a V (schedule.KindInfo.ChunkDevice).
func (e *evaluator) deviceChunks(i int) []int {
	p := e.cfg.PP
	if e.kind.VShaped {
		first, second := schedule.ZBVStages(p, i)
		return []int{first, second}
	}
	ks := make([]int, 0, e.chunks)
	for k := i; k < p*e.chunks; k += p {
		ks = append(ks, k)
	}
	return ks
}

// outputDevice returns the pipeline device that holds the last model
// chunk, with the output layer (and any multi-token prediction modules):
// the last device, or in a V the first, which also holds the embedding.
func (e *evaluator) outputDevice() int {
	return e.kind.ChunkDevice(e.cfg.PP*e.chunks-1, e.cfg.PP)
}

// layerIndices returns the layers device i of the pipeline holds, in
// order: those of its chunks (deviceChunks).
func (e *evaluator) layerIndices(i int) []int { return e.devLayers[i] }
