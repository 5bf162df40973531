package partition

import (
	"fmt"
	"math"

	"pipeplan/core/model"
)

// Cuts is the PipeDream DP's view of a model: N states (the DP's "layers"),
// each a cut through the model with cumulative sums over everything before
// it. For a layer chain, state j is "layers 0..j"; for a PipeDream graph it
// is an antichain state (model.States). A stage from state i to state j
// (i <= j) holds everything below j that is not below i−1.
type Cuts struct {
	// ComputeSeconds[j] is the forward+backward time of everything up to state j.
	ComputeSeconds []float64
	// ActivationBytes[j] is the activation bytes of everything up to state j.
	ActivationBytes []float64
	// ParameterBytes[j] is the parameter bytes of everything up to state j.
	ParameterBytes []float64
	// OutputBytes[j] is what crosses the cut after state j (activations forward).
	OutputBytes []float64
	// Ancestors lists, per state, the states that precede it, ascending; nil
	// for a chain, where every earlier state does.
	Ancestors [][]int

	anc  [][]bool // anc[j][k]: state k precedes state j; nil for a chain
	list []int    // 0..N−1, the ancestors of a chain state j are list[:j]
}

// Len is the number of states.
func (c *Cuts) Len() int { return len(c.ComputeSeconds) }

// ChainCuts returns the cuts of a layer chain: state j ends after layer j.
func ChainCuts(p model.Profile) (*Cuts, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	n := len(p.Layers)
	c := &Cuts{ComputeSeconds: make([]float64, n), ActivationBytes: make([]float64, n),
		ParameterBytes: make([]float64, n), OutputBytes: make([]float64, n)}
	var t, a, w float64
	for j, l := range p.Layers {
		t += l.FwdSeconds + l.BwdSeconds
		a += l.OutputActivationBytes
		w += l.ParameterBytes
		c.ComputeSeconds[j], c.ActivationBytes[j], c.ParameterBytes[j] = t, a, w
		c.OutputBytes[j] = l.OutputActivationBytes
		c.list = append(c.list, j)
	}
	return c, c.checkFinite()
}

// checkFinite rejects models whose totals overflow float64 (stage spans
// would be Inf − Inf).
func (c *Cuts) checkFinite() error {
	last := c.Len() - 1
	for _, f := range []struct {
		name string
		v    float64
	}{{"compute seconds", c.ComputeSeconds[last]}, {"activation bytes", c.ActivationBytes[last]},
		{"parameter bytes", c.ParameterBytes[last]}} {
		if math.IsInf(f.v, 0) || math.IsNaN(f.v) {
			return fmt.Errorf("profile: total %s overflow (%v)", f.name, f.v)
		}
	}
	return nil
}

// GraphCuts returns the cuts of PipeDream antichain states.
func GraphCuts(s *model.States) (*Cuts, error) {
	if s.Len() == 0 {
		return nil, fmt.Errorf("states: the graph has no states")
	}
	c := &Cuts{ComputeSeconds: s.ComputeSeconds, ActivationBytes: s.ActivationBytes,
		ParameterBytes: s.ParameterBytes, OutputBytes: s.OutputBytes, Ancestors: s.Ancestors}
	c.anc = make([][]bool, s.Len())
	for j, a := range s.Ancestors {
		c.anc[j] = make([]bool, s.Len())
		for _, k := range a {
			c.anc[j][k] = true
		}
	}
	return c, c.checkFinite()
}

// precedes reports whether state k precedes state j.
func (c *Cuts) precedes(k, j int) bool {
	if c.anc == nil {
		return k < j
	}
	return c.anc[j][k]
}

// ancestors returns the states preceding j, ascending.
func (c *Cuts) ancestors(j int) []int {
	if c.anc == nil {
		return c.list[:j]
	}
	return c.Ancestors[j]
}

// span returns a cumulative quantity of the stage from state i to state j.
func span(cum []float64, i, j int) float64 {
	if i == 0 {
		return cum[j]
	}
	return cum[j] - cum[i-1]
}
