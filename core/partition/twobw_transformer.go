package partition

import (
	"fmt"
	"math"

	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// TransformerBlocks adapts a transformer to the 2BW planner, one block per
// transformer layer ("the repetitive structure of large DNNs", §3.3.2):
//   - compute: core/cost's compute time of the whole model on one GPU at
//     microbatch b without recomputation (its GEMMs at their size-dependent
//     efficiency, the memory-bound kernels, the logits), spread evenly over
//     the layers; so larger microbatches run at a higher efficiency;
//   - weights: the layer's parameters at the training precision, the word
//     embedding's on the first block;
//   - stash: the layer's activations as core/model counts them (Korthikanti
//     et al.), with or without flash attention;
//   - input: one b×s×h activation at the training precision.
//
// Costs it cannot compute (an error of the cost model) make the block's
// compute +Inf and are reported by Err.
type TransformerBlocks struct {
	tr      model.Transformer
	one     hw.Cluster // one GPU of the cluster: compute does not depend on the rest
	flash   bool
	opt     cost.Options
	bpv     float64
	compute map[int]float64 // per-layer compute seconds by microbatch size
	err     error
}

// NewTransformerBlocks checks tr and gpu and wraps them for PlanTwoBW.
func NewTransformerBlocks(tr model.Transformer, gpu hw.GPU, flashAttention bool, opt cost.Options) (*TransformerBlocks, error) {
	if err := tr.Validate(); err != nil {
		return nil, err
	}
	bpv, err := tr.BytesPerValue()
	if err != nil {
		return nil, err
	}
	m := &TransformerBlocks{tr: tr, flash: flashAttention, opt: opt, bpv: bpv, compute: map[int]float64{},
		one: hw.Cluster{GPU: gpu, Levels: []hw.Level{{Workers: 1, BandwidthBytesPerSec: 1}}}}
	if m.layerSeconds(1); m.err != nil {
		return nil, m.err
	}
	return m, nil
}

// NumBlocks is the number of layers.
func (m *TransformerBlocks) NumBlocks() int { return m.tr.Layers }

// Err is the first error of the cost model met while planning, nil if none.
func (m *TransformerBlocks) Err() error { return m.err }

// StateBytesPerWeightByte is the gradient and optimizer state of
// optimizer (a core/cost name, "" = mixed-precision Adam) per byte of one
// weight version (TwoBWOptions.StateBytesPerWeightByte).
func (m *TransformerBlocks) StateBytesPerWeightByte(optimizer string) (float64, error) {
	o, err := cost.ParseOptimizer(optimizer)
	if err != nil {
		return 0, err
	}
	s, err := o.BytesPerParam(m.bpv)
	if err != nil {
		return 0, err
	}
	return (s.Gradients + s.Optimizer) / s.Weights, nil
}

// BlockCost is layer k's cost at microbatch b.
func (m *TransformerBlocks) BlockCost(k, b int) TwoBWBlockCost {
	c := TwoBWBlockCost{
		ComputeSeconds:  m.layerSeconds(b),
		WeightBytes:     m.bpv * m.tr.LayerParamsAt(k),
		ActivationBytes: m.tr.LayerActivationBytesAt(b, k, model.ActivationOptions{FlashAttention: m.flash}),
		InputBytes:      m.bpv * float64(b*m.tr.Seq*m.tr.Hidden),
	}
	if k == 0 {
		c.WeightBytes += m.bpv * float64(m.tr.Vocab*m.tr.Hidden)
	}
	return c
}

// layerSeconds is the forward and backward time of one layer's share of
// the model at microbatch b, cached.
func (m *TransformerBlocks) layerSeconds(b int) float64 {
	if s, ok := m.compute[b]; ok {
		return s
	}
	ex := plan.Execution{TP: 1, PP: 1, DP: 1, CP: 1, EP: 1, Interleave: 1, MicrobatchSize: b, GlobalBatch: b,
		Recompute: model.RecomputeNone, Schedule: schedule.OneFOneB, FlashAttention: m.flash}
	s := math.Inf(1)
	if pr, err := cost.Predict(m.tr, m.one, ex, m.opt); err != nil {
		if m.err == nil {
			m.err = fmt.Errorf("2bw: compute time at microbatch %d: %w", b, err)
		}
	} else {
		s = pr.Time.ComputeSeconds / float64(m.tr.Layers)
	}
	m.compute[b] = s
	return s
}
