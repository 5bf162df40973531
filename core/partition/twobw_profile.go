package partition

import (
	"context"
	"math"

	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// ProfileBlocks adapts a measured layer profile to the 2BW planner: each
// layer is a block, and times and activations scale linearly with the
// microbatch size from the profile's (per-block extrapolation, §3.3.3; it
// ignores the gain in arithmetic intensity of larger microbatches). A
// layer's stash is its output activation; a stage's input is the output of
// the layer before it (the first stage's input is not counted).
type ProfileBlocks struct {
	profile model.Profile
}

// NewProfileBlocks checks p and wraps it for PlanTwoBW.
func NewProfileBlocks(p model.Profile) (ProfileBlocks, error) {
	if err := p.Validate(); err != nil {
		return ProfileBlocks{}, err
	}
	return ProfileBlocks{profile: p}, nil
}

// NumBlocks is the number of layers.
func (pb ProfileBlocks) NumBlocks() int { return len(pb.profile.Layers) }

// BlockCost scales layer k's profile to microbatch size b.
func (pb ProfileBlocks) BlockCost(k, b int) TwoBWBlockCost {
	scale := float64(b) / float64(pb.profile.MicrobatchSize)
	l := pb.profile.Layers[k]
	c := TwoBWBlockCost{
		ComputeSeconds:  (l.FwdSeconds + l.BwdSeconds) * scale,
		WeightBytes:     l.ParameterBytes,
		ActivationBytes: l.OutputActivationBytes * scale,
	}
	if k > 0 {
		c.InputBytes = pb.profile.Layers[k-1].OutputActivationBytes * scale
	}
	return c
}

// SGDMomentumStateBytesPerWeightByte is the gradient and momentum kept per
// weight byte by SGD with momentum, the optimizer of PipeDream's profiled
// models (TwoBWOptions.StateBytesPerWeightByte for them).
const SGDMomentumStateBytesPerWeightByte = 2

// twoBWPlanner is PipeDream-2BW's planner (§3.3.2, Algorithm 1) as a
// Planner over a layer profile (ProfileBlocks), with SGD with momentum's
// optimizer state: the best configuration of every (d, p, execution).
type twoBWPlanner struct{}

func (twoBWPlanner) Name() string { return plan.PlannerTwoBW }

// Plan plans the problem's layer chain at global batch Fixed.GlobalBatch on
// the system: its servers (the innermost level) with the bandwidths inside
// and between them, and its memory per GPU (unlimited when 0).
func (pl twoBWPlanner) Plan(ctx context.Context, p Problem, progress Progress) ([]Candidate, error) {
	prof, err := p.needProfile(pl.Name())
	if err != nil {
		return nil, err
	}
	if err := p.System.Validate(); err != nil {
		return nil, err
	}
	blocks, err := NewProfileBlocks(prof)
	if err != nil {
		return nil, err
	}
	memory := p.System.MemoryBytes
	if memory == 0 {
		memory = math.MaxFloat64
	}
	cands, err := PlanTwoBW(ctx, blocks, TwoBWOptions{
		GPUs: p.System.GPUs(), GPUsPerServer: p.System.GPUsPerServer(),
		IntraServerBandwidthBytesPerSec: p.System.IntraServerBandwidthBytesPerSec(),
		InterServerBandwidthBytesPerSec: p.System.InterServerBandwidthBytesPerSec(),
		MemoryBytes:                     memory, BatchSize: p.Fixed.GlobalBatch,
		StateBytesPerWeightByte: SGDMomentumStateBytesPerWeightByte,
	}, progress)
	for i := range cands {
		cands[i].model, cands[i].cluster = profilePlanModel(prof), p.System.PlanCluster()
	}
	return cands, err
}
