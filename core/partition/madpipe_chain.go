package partition

import (
	"fmt"
	"math"

	"pipeplan/core/model"
)

// madChain holds the prefix sums of a layer chain that MadPipe's cost and
// memory model (madpipe-2020 §3, §4.2.1) needs, 0-based: layer i stores its
// input a_{i-1} (a_{-1} = 0: the data input is not profiled, as PipeDream
// drops it), and the boundary after layer i carries a_i forward and its
// gradient back.
type madChain struct {
	// layers is the number of layers L.
	layers int
	// computeSum[i] is U of layers 0..i-1 (forward plus backward seconds).
	computeSum []float64
	// fwdSum[i] is the forward seconds of layers 0..i-1.
	fwdSum []float64
	// storedSum[i] is the sum over layers 0..i-1 of their input activation bytes.
	storedSum []float64
	// weightSum[i] is the parameter bytes of layers 0..i-1.
	weightSum []float64
	// output[i] is a_i, the output activation bytes of layer i.
	output []float64
	// bandwidth is β in bytes/s.
	bandwidth float64
}

// newMadChain validates prof and the bandwidth and builds the prefix sums.
func newMadChain(prof model.Profile, bandwidthBytesPerSec float64) (*madChain, error) {
	if err := prof.ValidateLayers(); err != nil {
		return nil, err
	}
	if !(bandwidthBytesPerSec > 0) || math.IsInf(bandwidthBytesPerSec, 0) {
		return nil, fmt.Errorf("bandwidth_bytes_per_sec: must be a finite number > 0, got %v", bandwidthBytesPerSec)
	}
	n := len(prof.Layers)
	c := &madChain{
		layers:     n,
		computeSum: make([]float64, n+1),
		fwdSum:     make([]float64, n+1),
		storedSum:  make([]float64, n+1),
		weightSum:  make([]float64, n+1),
		output:     make([]float64, n),
		bandwidth:  bandwidthBytesPerSec,
	}
	for i, l := range prof.Layers {
		input := 0.0
		if i > 0 {
			input = prof.Layers[i-1].OutputActivationBytes
		}
		c.computeSum[i+1] = c.computeSum[i] + l.FwdSeconds + l.BwdSeconds
		c.fwdSum[i+1] = c.fwdSum[i] + l.FwdSeconds
		c.storedSum[i+1] = c.storedSum[i] + input
		c.weightSum[i+1] = c.weightSum[i] + l.ParameterBytes
		c.output[i] = l.OutputActivationBytes
	}
	if math.IsInf(c.computeSum[n], 0) || math.IsInf(c.storedSum[n], 0) || math.IsInf(c.weightSum[n], 0) {
		return nil, fmt.Errorf("profile.layers: sums of times or bytes overflow")
	}
	return c, nil
}

// compute is U(first, last): forward plus backward seconds of layers first..last.
func (c *madChain) compute(first, last int) float64 {
	return c.computeSum[last+1] - c.computeSum[first]
}

// forward is the forward seconds of layers first..last.
func (c *madChain) forward(first, last int) float64 {
	return c.fwdSum[last+1] - c.fwdSum[first]
}

// comm is C(i) = 2a_i/β (§4.2): the activation of layer i sent forward plus
// its gradient sent back, when layers i and i+1 are on different processors.
func (c *madChain) comm(i int) float64 {
	return 2 * c.output[i] / c.bandwidth
}

// stored is ā for layers first..last (§4.3): the bytes one in-flight
// microbatch keeps on the stage, the inputs of all its layers.
func (c *madChain) stored(first, last int) float64 {
	return c.storedSum[last+1] - c.storedSum[first]
}

// fixedMemory is the part of 𝓜(k, l, g) (§4.2.1) that does not depend on g:
// three copies of the weights (two versions and a gradient, as 2BW) and the
// send/receive buffers 2a_{k-1} and 2a_l at the stage's two boundaries.
func (c *madChain) fixedMemory(first, last int) float64 {
	m := 3 * (c.weightSum[last+1] - c.weightSum[first])
	if first > 0 {
		m += 2 * c.output[first-1]
	}
	if last < c.layers-1 {
		m += 2 * c.output[last]
	}
	return m
}

// memory is 𝓜(k, l, g) of §4.2.1: the bytes of a stage that keeps g
// activations in flight.
func (c *madChain) memory(first, last, g int) float64 {
	return c.fixedMemory(first, last) + float64(g)*c.stored(first, last)
}

// totalCompute is U(1, L).
func (c *madChain) totalCompute() float64 { return c.computeSum[c.layers] }

// totalComm is the sum of C over all boundaries, the communication part of
// Algorithm 1's upper bound.
func (c *madChain) totalComm() float64 {
	s := 0.0
	for i := 0; i < c.layers-1; i++ {
		s += c.comm(i)
	}
	return s
}

// madGroups is ⌈x/T̂⌉, the 1F1B* group a delay of x falls into (§4.2.1), with a
// relative tolerance so that a delay equal to k periods up to rounding stays
// in group k.
func madGroups(x, period float64) int {
	q := x / period
	tol := 1e-9
	if q > 1 {
		tol *= q
	}
	if g := math.Ceil(q - tol); g > 0 {
		return int(g)
	}
	return 0
}

// madOplus is x ⊕ y of §4.2.2: add y to the delay x if it stays in the same
// group, otherwise start a new group at the next multiple of T̂.
func madOplus(x, y, period float64) float64 {
	return madOplusGroups(x, madGroups(x, period), madGroups(x+y, period), y, period)
}

// madOplusGroups is x ⊕ y given gx = ⌈x/T̂⌉ and gxy = ⌈(x+y)/T̂⌉.
func madOplusGroups(x float64, gx, gxy int, y, period float64) float64 {
	if gx == gxy {
		return x + y
	}
	return period*float64(gx) + y
}
