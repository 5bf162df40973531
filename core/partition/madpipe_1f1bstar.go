package partition

import (
	"fmt"
	"math"
	"sort"

	"pipeplan/core/model"
)

// OneFOneBStar is the 1F1B* schedule of a contiguous partitioning at one
// period (madpipe-2020 §4.1): the stages grouped from the last one so that
// each group's load fits in the period, and what each stage keeps in memory.
type OneFOneBStar struct {
	// PeriodSeconds is the period T of the pattern.
	PeriodSeconds float64 `json:"period_seconds"`
	// FirstLayers[i] is the first layer of stage i (0-based); stage i ends
	// where stage i+1 begins, the last stage at the last layer.
	FirstLayers []int `json:"first_layers"`
	// Activations[i] is the group number of stage i, which is the number of
	// microbatch activations it keeps (§4.1, Proposition 1: the fewest of
	// any periodic pattern of this period).
	Activations []int `json:"activations"`
	// MemoryBytes[i] is 𝓜 of stage i (§4.2.1): three weight copies, its
	// activations, and its communication buffers.
	MemoryBytes []float64 `json:"memory_bytes"`
}

// madStageBounds validates the first layers of a contiguous partitioning and
// returns each stage's [first, last].
func madStageBounds(c *madChain, firstLayers []int) ([][2]int, error) {
	if len(firstLayers) == 0 || firstLayers[0] != 0 {
		return nil, fmt.Errorf("first_layers: must start with 0, got %v", firstLayers)
	}
	b := make([][2]int, len(firstLayers))
	for i, f := range firstLayers {
		last := c.layers - 1
		if i+1 < len(firstLayers) {
			last = firstLayers[i+1] - 1
		}
		if f > last || f >= c.layers {
			return nil, fmt.Errorf("first_layers[%d]: must be increasing and < %d layers, got %v", i, c.layers, firstLayers)
		}
		b[i] = [2]int{f, last}
	}
	return b, nil
}

// madResourceLoads lists the 2P-1 resources of a contiguous partitioning in
// chain order, stages at even indices and the links between them at odd
// ones (§4.1: each communication is treated as a layer of load C).
func madResourceLoads(c *madChain, bounds [][2]int) []float64 {
	loads := make([]float64, 0, 2*len(bounds)-1)
	for i, b := range bounds {
		if i > 0 {
			loads = append(loads, c.comm(b[0]-1))
		}
		loads = append(loads, c.compute(b[0], b[1]))
	}
	return loads
}

// madStarGroups builds the 1F1B* groups (§4.1): from the last resource, add
// resources while the group's load stays within the period. It returns the
// group number of each resource (1 for the group of the last one).
func madStarGroups(loads []float64, period float64) []int {
	g := make([]int, len(loads))
	group, sum := 1, 0.0
	for i := len(loads) - 1; i >= 0; i-- {
		if sum+loads[i] > period*(1+1e-12) {
			group++
			sum = 0
		}
		sum += loads[i]
		g[i] = group
	}
	return g
}

// OneFOneBStarAt computes the 1F1B* pattern of the contiguous partitioning
// given by firstLayers at the given period (madpipe-2020 §4.1).
func OneFOneBStarAt(prof model.Profile, firstLayers []int, bandwidthBytesPerSec, periodSeconds float64) (*OneFOneBStar, error) {
	c, err := newMadChain(prof, bandwidthBytesPerSec)
	if err != nil {
		return nil, err
	}
	bounds, err := madStageBounds(c, firstLayers)
	if err != nil {
		return nil, err
	}
	return oneFOneBStar(c, bounds, periodSeconds)
}

func oneFOneBStar(c *madChain, bounds [][2]int, period float64) (*OneFOneBStar, error) {
	loads := madResourceLoads(c, bounds)
	maxLoad := 0.0
	for _, l := range loads {
		maxLoad = math.Max(maxLoad, l)
	}
	if !(period >= maxLoad) || math.IsInf(period, 0) || period <= 0 {
		return nil, fmt.Errorf("period_seconds: must be finite, > 0 and >= the largest load %g, got %v", maxLoad, period)
	}
	g := madStarGroups(loads, period)
	s := &OneFOneBStar{PeriodSeconds: period}
	for i, b := range bounds {
		s.FirstLayers = append(s.FirstLayers, b[0])
		s.Activations = append(s.Activations, g[2*i])
		s.MemoryBytes = append(s.MemoryBytes, c.memory(b[0], b[1], g[2*i]))
	}
	return s, nil
}

// OneFOneBStarMinPeriod returns the 1F1B* pattern of the contiguous
// partitioning with the smallest period at which every stage fits in
// memoryBytes. The activations kept only fall as the period grows, and only
// change where the period equals the load of a run of consecutive resources,
// so the answer is the largest load or one of those sums (§4.1).
func OneFOneBStarMinPeriod(prof model.Profile, firstLayers []int, bandwidthBytesPerSec, memoryBytes float64) (*OneFOneBStar, error) {
	if !(memoryBytes > 0) || math.IsInf(memoryBytes, 0) {
		return nil, fmt.Errorf("memory_bytes: must be a finite number > 0, got %v", memoryBytes)
	}
	c, err := newMadChain(prof, bandwidthBytesPerSec)
	if err != nil {
		return nil, err
	}
	bounds, err := madStageBounds(c, firstLayers)
	if err != nil {
		return nil, err
	}
	loads := madResourceLoads(c, bounds)
	maxLoad := 0.0
	for _, l := range loads {
		maxLoad = math.Max(maxLoad, l)
	}
	candidates := []float64{maxLoad}
	for i := range loads {
		sum := 0.0
		for j := i; j < len(loads); j++ {
			sum += loads[j]
			if sum > maxLoad {
				candidates = append(candidates, sum)
			}
		}
	}
	sort.Float64s(candidates)
	fits := func(period float64) (*OneFOneBStar, bool) {
		s, err := oneFOneBStar(c, bounds, period)
		if err != nil {
			return nil, false
		}
		for _, m := range s.MemoryBytes {
			if m > memoryBytes {
				return s, false
			}
		}
		return s, true
	}
	last := candidates[len(candidates)-1]
	if s, ok := fits(last); !ok {
		need := 0.0
		for _, m := range s.MemoryBytes {
			need = math.Max(need, m)
		}
		return nil, fmt.Errorf("memory_bytes: partitioning needs %.0f bytes on its largest stage even with one activation per stage, got %.0f", need, memoryBytes)
	}
	i := sort.Search(len(candidates), func(i int) bool {
		_, ok := fits(candidates[i])
		return ok
	})
	s, _ := fits(candidates[i])
	return s, nil
}
