package partition

import (
	"pipeplan/core/model"
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
