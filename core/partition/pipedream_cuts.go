package partition

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

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
	// Ancestors lists, per state, the states that precede it (a transitive
	// relation), ascending; nil for a chain, where every earlier state does.
	Ancestors [][]int

	// anc[j] and desc[k] are bitsets (bit x of word x/64): anc[j] holds
	// the states preceding j, desc[k] those k precedes; rank[j][w] counts
	// j's ancestors in the words before w. All nil for a chain.
	anc, desc [][]uint64
	rank      [][]int32
	list      []int // 0..N−1, the ancestors of a chain state j are list[:j]
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
	n, words := s.Len(), (s.Len()+63)/64
	c.anc, c.desc, c.rank = make([][]uint64, n), make([][]uint64, n), make([][]int32, n)
	for j := range n {
		c.anc[j], c.desc[j], c.rank[j] = make([]uint64, words), make([]uint64, words), make([]int32, words)
	}
	for j, a := range s.Ancestors {
		for _, k := range a {
			c.anc[j][k/64] |= 1 << (k % 64)
			c.desc[k][j/64] |= 1 << (j % 64)
		}
		for w := 1; w < words; w++ {
			c.rank[j][w] = c.rank[j][w-1] + int32(bits.OnesCount64(c.anc[j][w-1]))
		}
	}
	return c, c.checkFinite()
}

// precedes reports whether state k precedes state j.
func (c *Cuts) precedes(k, j int) bool {
	if c.anc == nil {
		return k < j
	}
	return c.anc[j][k/64]&(1<<(k%64)) != 0
}

// ancestorIndex is the index of state k in ancestors(j), k preceding j.
func (c *Cuts) ancestorIndex(k, j int) int {
	if c.anc == nil {
		return k
	}
	w := k / 64
	return int(c.rank[j][w]) + bits.OnesCount64(c.anc[j][w]&(1<<(k%64)-1))
}

// appendSplits appends to ks the split states k of a stage from state i
// to state j, with i <= k and k preceding j, ascending, each
// followed by its index in ancestors(j); with below, only the k that
// state i−1 precedes (i > 0), as a stage i..k needs.
func (c *Cuts) appendSplits(ks []int32, i, j int, below bool) []int32 {
	if c.anc == nil { // a chain: every k in [i, j)
		for k := i; k < j; k++ {
			ks = append(ks, int32(k), int32(k))
		}
		return ks
	}
	list := c.Ancestors[j]
	if len(list) == 0 || list[len(list)-1] < i {
		return ks
	}
	if !below || i == 0 { // every ancestor from i on, at consecutive indices
		q, _ := slices.BinarySearch(list, i)
		for ; q < len(list); q++ {
			ks = append(ks, int32(list[q]), int32(q))
		}
		return ks
	}
	anc, desc := c.anc[j], c.desc[i-1]
	for w := i / 64; w <= list[len(list)-1]/64; w++ {
		word := anc[w] & desc[w]
		if w == i/64 {
			word &^= 1<<(i%64) - 1 // below i
		}
		for word != 0 {
			k := w*64 + bits.TrailingZeros64(word)
			ks = append(ks, int32(k), int32(c.ancestorIndex(k, j)))
			word &= word - 1
		}
	}
	return ks
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
