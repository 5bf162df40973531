package partition

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMadPatternOfContiguousSplitIs1F1BStar checks that modulo list
// scheduling of a contiguous partitioning is valid and keeps exactly the
// activations of 1F1B* (madpipe-2020 §4.1), which Proposition 1 proves the
// fewest of any periodic pattern.
func TestMadPatternOfContiguousSplitIs1F1BStar(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 500; trial++ {
		L := 1 + rng.IntN(12)
		prof := madRandomChain(rng, L)
		c, _ := newMadChain(prof, 1e9+2e10*rng.Float64())
		firsts := []int{0}
		var stages []madStage
		for i := 1; i < L; i++ {
			if rng.IntN(3) == 0 {
				stages = append(stages, madStage{first: firsts[len(firsts)-1], last: i - 1})
				firsts = append(firsts, i)
			}
		}
		stages = append(stages, madStage{first: firsts[len(firsts)-1], last: L - 1})
		bounds, _ := madStageBounds(c, firsts)
		period := randomFeasiblePeriod(rng, c, bounds)
		star, err := OneFOneBStarAt(prof, firsts, c.bandwidth, period)
		if err != nil {
			t.Fatal(err)
		}
		pl := madPlace(stages)
		pat, ok := madBuildPattern(c, pl, period)
		if !ok {
			t.Fatalf("trial %d: no pattern at period %g (>= the largest resource load)", trial, period)
		}
		if err := madCheckPattern(pat); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		mem, act := madMemory(c, pl, pat)
		for s := range stages {
			if act[s] != star.Activations[s] {
				t.Fatalf("trial %d: pattern keeps %v activations, 1F1B* %v", trial, act, star.Activations)
			}
			if math.Abs(mem[s]-star.MemoryBytes[s]) > 1e-9*star.MemoryBytes[s] {
				t.Fatalf("trial %d stage %d: pattern memory %g, 1F1B* %g", trial, s, mem[s], star.MemoryBytes[s])
			}
		}
	}
}

// TestMadCheckPatternRejectsInvalid breaks valid patterns in the two ways a
// periodic pattern can be wrong and expects the checker to notice.
func TestMadCheckPatternRejectsInvalid(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	c, _ := newMadChain(madRandomChain(rng, 6), 1e10)
	pl := madPlace([]madStage{{0, 1, false}, {2, 3, true}, {4, 4, false}, {5, 5, true}})
	period := 1.5 * math.Max(madAllocationPeriod(c, pl.stages), madLinkPeriod(c, pl))
	pat, ok := madBuildPattern(c, pl, period)
	if !ok {
		t.Fatal("no pattern")
	}
	if err := madCheckPattern(pat); err != nil {
		t.Fatalf("valid pattern rejected: %v", err)
	}
	// Start the last backward before its predecessor ends.
	early := *pat
	early.ops = append([]PatternOp(nil), pat.ops...)
	early.sigma = append([]float64(nil), pat.sigma...)
	n := len(early.ops) - 1
	early.sigma[n] = early.sigma[n-1]
	early.ops[n].Shift = int(math.Floor(early.sigma[n] / period))
	early.ops[n].StartSeconds = early.sigma[n] - float64(early.ops[n].Shift)*period
	if madCheckPattern(&early) == nil {
		t.Error("dependency violation not detected")
	}
	// Put the two passes of the special processor's first stage on top of each other.
	clash := *pat
	clash.ops = append([]PatternOp(nil), pat.ops...)
	var f, b int
	for i, op := range clash.ops {
		if op.Stage == 1 && op.Kind == "F" {
			f = i
		}
		if op.Stage == 3 && op.Kind == "B" {
			b = i
		}
	}
	clash.ops[b].StartSeconds = clash.ops[f].StartSeconds
	if madCheckPattern(&clash) == nil {
		t.Error("overlap on the special processor not detected")
	}
}

// randomFeasiblePeriod draws a period between the busiest resource's load
// (the smallest period 1F1B* can sustain) and the sum of all loads.
func randomFeasiblePeriod(rng *rand.Rand, c *madChain, bounds [][2]int) float64 {
	maxLoad, sum := 0.0, 0.0
	for _, l := range madResourceLoads(c, bounds) {
		maxLoad, sum = math.Max(maxLoad, l), sum+l
	}
	return maxLoad + rng.Float64()*(sum-maxLoad)
}
