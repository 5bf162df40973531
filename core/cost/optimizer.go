package cost

import "fmt"

// Optimizer names how weights, gradients and optimizer state are kept.
type Optimizer string

// Optimizers and the bytes per parameter they keep (ZeRO, Rajbhandari et al.
// 2020 §3.1; w is the training precision's bytes per value).
const (
	// SGD is momentum SGD in the training precision: weights, gradients and
	// momentum, 3w bytes per parameter.
	SGD Optimizer = "sgd"
	// AdamFP32 is Adam in fp32: 4 weights + 4 gradients + 8 moments = 16 B/param.
	AdamFP32 Optimizer = "adam"
	// MixedAdam is mixed-precision Adam: 16-bit weights and gradients, fp32
	// master weights and moments: 2 + 2 + 12 = 16 B/param.
	MixedAdam Optimizer = "mixed-adam"
	// MixedAdamFP32Grads is mixed-precision Adam that accumulates gradients
	// in fp32 (Megatron-LM's main_grad buffers): 2 + 4 + 12 = 18 B/param.
	MixedAdamFP32Grads Optimizer = "mixed-adam-fp32-grads"
)

// ParseOptimizer parses an optimizer name ("" means mixed-adam).
func ParseOptimizer(s string) (Optimizer, error) {
	switch o := Optimizer(s); o {
	case "":
		return MixedAdam, nil
	case SGD, AdamFP32, MixedAdam, MixedAdamFP32Grads:
		return o, nil
	}
	return "", fmt.Errorf("optimizer: must be sgd, adam, mixed-adam or mixed-adam-fp32-grads, got %q", s)
}

// StateBytes is the per-parameter memory of an optimizer, split the way
// ZeRO shards it.
type StateBytes struct {
	// Weights are the parameters the forward pass reads (one version).
	Weights float64
	// Gradients are the gradient buffers.
	Gradients float64
	// Optimizer is the optimizer state (fp32 master weights, moments).
	Optimizer float64
}

// BytesPerParam returns the per-parameter memory of o when weights and
// activations are bytesPerValue wide.
func (o Optimizer) BytesPerParam(bytesPerValue float64) (StateBytes, error) {
	switch o {
	case SGD:
		return StateBytes{bytesPerValue, bytesPerValue, bytesPerValue}, nil
	case AdamFP32:
		return StateBytes{4, 4, 8}, nil
	case MixedAdam, "":
		return StateBytes{bytesPerValue, bytesPerValue, 12}, nil
	case MixedAdamFP32Grads:
		return StateBytes{bytesPerValue, 4, 12}, nil
	}
	return StateBytes{}, fmt.Errorf("optimizer: unknown %q", o)
}

// Shard returns the per-GPU bytes per parameter when a stage is replicated
// d ways with ZeRO stage zero (0: none; 1: optimizer state sharded — also
// Megatron-LM's distributed optimizer; 2: and gradients; 3: and weights),
// Rajbhandari et al. 2020 §5.
func (s StateBytes) Shard(zero, d int) (StateBytes, error) {
	if zero < 0 || zero > 3 {
		return StateBytes{}, fmt.Errorf("zero: must be 0, 1, 2 or 3, got %d", zero)
	}
	if d < 1 {
		return StateBytes{}, fmt.Errorf("dp: must be >= 1, got %d", d)
	}
	dd := float64(d)
	if zero >= 1 {
		s.Optimizer /= dd
	}
	if zero >= 2 {
		s.Gradients /= dd
	}
	if zero >= 3 {
		s.Weights /= dd
	}
	return s, nil
}

// Total returns the sum of the three parts.
func (s StateBytes) Total() float64 { return s.Weights + s.Gradients + s.Optimizer }
