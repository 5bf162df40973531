package cost

import (
	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// Predictor predicts executions of one model on one cluster with one set
// of options, as a search does: it validates the model and the cluster
// once and reuses what executions share — the cost of each kind of layer
// for the same tensor, context and expert parallelism, microbatch and
// recomputation (whatever the pipeline and data-parallel degrees), each
// pipeline layout's layers and parameters, the FLOPs of a step. Each
// prediction is the one Predict gives, bit for bit
// (TestPredictorMatchesPredict). A Predictor is not safe for concurrent
// use; what it keeps grows with the distinct executions it has seen.
type Predictor struct {
	tr     model.Transformer
	c      hw.Cluster
	opt    Options
	params [2]float64 // Params and ActiveParams
	kinds  []uint8    // each layer's kind (layerKind)
	// linear is each layer's linear-layer parameters
	// (model.Transformer.LayerLinearParamsAt) and experts all its routed
	// experts' (E · ExpertParams).
	linear  []float64
	experts float64
	flops   map[flopsKey]float64
	layers  map[plan.Execution]layerCosts // by layerKey
	work    map[workKey]layerWork
	layouts map[layoutKey]layout
	// lastLayers and lastLayout are the latest of each, looked up first.
	lastLayers struct {
		key   plan.Execution
		costs layerCosts
		ok    bool
	}
	lastLayout struct {
		key    layoutKey
		layout layout
		ok     bool
	}
	// calibration is every prediction's Calibration (calibrationCaveat).
	calibration string
	// base is what every evaluator starts from (baseEvaluator) and
	// baseErr what is wrong with the options, if anything.
	base    evaluator
	baseErr error
	// scratch is the evaluator of the latest prediction: one allocation
	// per Predictor, not per prediction.
	scratch evaluator
	// attention holds AttentionKernelFLOPS's rates by context-parallel
	// size and kernels.
	attention map[attentionKey][2]float64
	// steppers hold the simulated schedules (vPipelineSeconds) by kind,
	// stages and microbatches, and stepperSize their stages × microbatches
	// in all, at most maxStepperSize.
	steppers    map[stepperKey]*schedule.Stepper
	stepperSize int
	// serverHits holds serverHitProbability of the model's experts by the
	// servers an expert-parallel group spans.
	serverHits map[int]float64
}

// stepperKey is what a simulated schedule depends on.
type stepperKey struct {
	kind      schedule.Kind
	stages, m int
}

// maxStepperSize bounds the schedules a Predictor keeps, in stages ×
// microbatches (a few hundred bytes each): a search meets a few dozen
// (stages, microbatches) pairs; past the bound it starts over.
const maxStepperSize = 4 * MaxSimulatedStageMicrobatches

// stepper returns the Stepper of kind's schedule over p stages and m
// microbatches, generated once.
func (p *Predictor) stepper(kind schedule.Kind, stages, m int) (*schedule.Stepper, error) {
	k := stepperKey{kind, stages, m}
	if st, ok := p.steppers[k]; ok {
		return st, nil
	}
	s, err := schedule.Generate(kind, schedule.Options{Stages: stages, Microbatches: m})
	if err != nil {
		return nil, err
	}
	st, err := schedule.NewStepper(s)
	if err != nil {
		return nil, err
	}
	if p.stepperSize += stages * m; p.stepperSize > maxStepperSize {
		clear(p.steppers)
		p.stepperSize = stages * m
	}
	p.steppers[k] = st
	return st, nil
}

// serverHit returns serverHitProbability of the model's experts m over
// servers, computed once (with many groups a server overlaps, it is a
// dynamic programme over them).
func (p *Predictor) serverHit(m model.MoE, servers int) float64 {
	if h, ok := p.serverHits[servers]; ok {
		return h
	}
	h := serverHitProbability(m, servers)
	p.serverHits[servers] = h
	return h
}

// flopsKey is what a step's FLOPs depend on.
type flopsKey struct {
	batch     int
	recompute model.Recompute
}

// layerCosts are the time and size of one layer of each kind (layerKind).
type layerCosts struct {
	time [2]layerTime
	size [2]layerSize
}

// layoutKey is what a pipeline layout's layers and parameters per device
// depend on: the chunks and how tensor and expert parallelism split the
// weights.
type layoutKey struct {
	pp, chunks, tp, ep, etp int
	vShaped                 bool // the chunks placed in a V (deviceChunks)
}

// layout is each pipeline device's layers and parameters, where its
// layers of each kind sit in its chunks (layOut), and the runs of devices
// that cost the same.
type layout struct {
	devLayers  [][]int
	devWeights []devParams
	leading    [][][2]float64
	runs       layoutRuns
}

// layoutRuns are a layout's runs of devices that cost the same (stageRuns):
// whatever the recomputation, and where only some layers of each chunk
// recompute.
type layoutRuns struct{ all, partial []stageRun }

// NewPredictor validates tr and c and returns a Predictor for them.
func NewPredictor(tr model.Transformer, c hw.Cluster, opt Options) (*Predictor, error) {
	if err := tr.Validate(); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	kinds, linear := make([]uint8, tr.Layers), make([]float64, tr.Layers)
	for i := range kinds {
		if tr.IsMoELayer(i) {
			kinds[i] = 1
		}
		linear[i] = tr.LayerLinearParamsAt(i)
	}
	var experts float64
	if tr.MoE != nil {
		experts = float64(tr.MoE.Experts) * tr.ExpertParams()
	}
	p := &Predictor{tr: tr, c: c, opt: opt, params: [2]float64{tr.Params(), tr.ActiveParams()}, kinds: kinds, linear: linear, experts: experts,
		flops: map[flopsKey]float64{}, layers: map[plan.Execution]layerCosts{}, work: map[workKey]layerWork{}, layouts: map[layoutKey]layout{},
		calibration: calibrationCaveat(c.GPU, tr.MoE != nil), attention: map[attentionKey][2]float64{}, steppers: map[stepperKey]*schedule.Stepper{},
		serverHits: map[int]float64{}}
	p.base, p.baseErr = baseEvaluator(tr, c, opt, p)
	return p, nil
}

// attentionKey is what the fused attention's rates depend on within one
// Predictor: the context-parallel size and the kernels.
type attentionKey struct {
	cp     int
	kernel string
}

// fusedAttention is AttentionKernelFLOPS over the s/cp tokens of a
// context-parallel rank, computed once per cp and kernels.
func (p *Predictor) fusedAttention(cp int, kernel string) (fwd, bwd float64) {
	k := attentionKey{cp, kernel}
	r, ok := p.attention[k]
	if !ok {
		r[0], r[1], _ = AttentionKernelFLOPS(p.c.GPU, float64(p.tr.Seq)/float64(cp), kernel)
		p.attention[k] = r
	}
	return r[0], r[1]
}

// Predict is the package's Predict of ex on p's model, cluster and options.
func (p *Predictor) Predict(ex plan.Execution) (Prediction, error) {
	e, err := evaluatorFor(p, ex)
	if err != nil {
		return Prediction{}, err
	}
	return e.predict(true), nil
}

// PredictPeak is Predict without Prediction.StageMemory (nil; Memory, the
// most loaded GPU's, is set): what a search keeps of every candidate.
func (p *Predictor) PredictPeak(ex plan.Execution) (Prediction, error) {
	e, err := evaluatorFor(p, ex)
	if err != nil {
		return Prediction{}, err
	}
	return e.predict(false), nil
}

// PredictIfFits is PredictPeak for an execution whose most loaded GPU
// fits its memory (Memory.Fits). For one that does not, it predicts the
// memory alone: the Prediction holds Memory, as PredictPeak would give it,
// and nothing else. A search that ranks what does not fit by its memory
// need not predict its time (partition.PTDPOptions.Keep).
func (p *Predictor) PredictIfFits(ex plan.Execution) (Prediction, error) {
	e, err := evaluatorFor(p, ex)
	if err != nil {
		return Prediction{}, err
	}
	mem := e.peakMemory()
	if !mem.Fits() {
		return Prediction{Memory: mem}, nil
	}
	pr := e.predictTime()
	pr.Memory = mem
	return pr, nil
}

// iterationFLOPs is p's model's IterationFLOPs.
func (p *Predictor) iterationFLOPs(batch int, r model.Recompute) float64 {
	k := flopsKey{batch, r}
	f, ok := p.flops[k]
	if !ok {
		f = p.tr.IterationFLOPs(batch, r)
		p.flops[k] = f
	}
	return f
}

// layerKey is the part of an execution (with its defaults) that the costs
// of its layers depend on: all of it but the pipeline and data-parallel
// degrees, the interleaving, the global batch, the schedule and the ZeRO
// stage, and how many layers of a chunk recompute (the layout counts
// them: layerMix). A layer cost that comes to depend on one of these must
// keep it here (TestPredictorMatchesPredict compares with fresh
// evaluations).
func layerKey(cfg plan.Execution) plan.Execution {
	cfg.PP, cfg.DP, cfg.Interleave, cfg.GlobalBatch, cfg.Schedule, cfg.ZeRO, cfg.RecomputeLayers = 0, 0, 0, 0, "", 0, 0
	return cfg
}

// layerCosts returns e.costLayers, computed once per layerKey; the latest
// is kept apart from the map, since a search asks for it again for each
// ZeRO stage and interleaving of a configuration.
func (p *Predictor) layerCosts(e *evaluator) ([2]layerTime, [2]layerSize) {
	k := layerKey(e.cfg)
	if p.lastLayers.ok && p.lastLayers.key == k {
		return p.lastLayers.costs.time, p.lastLayers.costs.size
	}
	lc, ok := p.layers[k]
	if !ok {
		lc.time, lc.size = e.costLayers()
		p.layers[k] = lc
	}
	p.lastLayers.key, p.lastLayers.costs, p.lastLayers.ok = k, lc, true
	return lc.time, lc.size
}

// layerWork returns e.layerWork(i), computed once per workKey: the
// executions that differ only in recomputation, overlaps or how context
// and expert parallelism communicate share it, and a dense layer's also
// those that differ in expert parallelism.
func (p *Predictor) layerWork(e *evaluator, i int) layerWork {
	cfg, kind := e.cfg, e.layerKind(i)
	if kind == 0 {
		cfg.EP = 1 // a dense layer's work does not depend on expert parallelism
	}
	k := workKey{kind, cfg.MicrobatchSize, cfg.TP, cfg.CP, cfg.EP, cfg.SequenceParallel, cfg.FlashAttention, cfg.AttentionKernel}
	w, ok := p.work[k]
	if !ok {
		w = e.layerWork(i)
		p.work[k] = w
	}
	return w
}

// layout returns e.layOut, computed once per layoutKey. The slices are
// shared between evaluators: they only read them.
func (p *Predictor) layout(e *evaluator) ([][]int, []devParams, [][][2]float64, layoutRuns) {
	k := layoutKey{e.cfg.PP, e.chunks, e.cfg.TP, e.cfg.EP, e.etp, e.kind.VShaped}
	l, ok := p.lastLayout.layout, p.lastLayout.ok && p.lastLayout.key == k
	if !ok {
		if l, ok = p.layouts[k]; !ok {
			l.devLayers, l.devWeights, l.leading = e.layOut()
			l.runs = layoutRuns{all: stageRuns(l.devWeights, nil), partial: stageRuns(l.devWeights, l.leading)}
			p.layouts[k] = l
		}
		p.lastLayout.key, p.lastLayout.layout, p.lastLayout.ok = k, l, true
	}
	return l.devLayers, l.devWeights, l.leading, l.runs
}

// FewestRecomputeLayers returns ex, an execution that recomputes every
// layer (full recomputation, RecomputeLayers 0), with RecomputeLayers set
// to the fewest layers of each chunk that must recompute for its most
// loaded GPU to fit (Memory.Fits), its prediction as PredictPeak gives it,
// and ok; ok is false when none need recompute (ex without recomputation
// fits), when recomputing fewer than every layer of its longest chunk
// does not fit, or when ex is not such an execution. Memory never grows
// with the layers recomputed, so a bisection finds the fewest, each step
// the memory of one evaluator's devices with another count (about log2 of
// the chunk's layers steps).
func (p *Predictor) FewestRecomputeLayers(ex plan.Execution) (fewest plan.Execution, pr Prediction, ok bool, err error) {
	if ex.Recompute != model.RecomputeFull || ex.RecomputeLayers != 0 {
		return ex, pr, false, nil
	}
	some := ex
	some.RecomputeLayers = 1
	e, err := evaluatorFor(p, some)
	if err != nil {
		return ex, pr, false, err
	}
	longest := 0
	for _, lead := range e.leading {
		longest = max(longest, len(lead)-1)
	}
	fits := func(n int) bool {
		e.recomputeN = n // 0: none recompute
		return e.peakMemory().Fits()
	}
	lo, hi := 0, longest-1 // the fewest is in (lo, hi] once hi fits and lo does not
	if hi < 1 || fits(lo) || !fits(hi) {
		return ex, pr, false, nil
	}
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; fits(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	ex.RecomputeLayers = hi
	e.cfg.RecomputeLayers, e.recomputeN = hi, hi // the evaluator evaluatorFor(ex) gives
	return ex, e.predict(false), true, nil
}
