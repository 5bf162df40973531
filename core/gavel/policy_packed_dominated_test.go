package gavel

import (
	"math"
	"testing"
)

// TestWithoutDominatedPairs: leaving out the pairs worth less than time
// sharing keeps the max-min level and the Pareto optimum of packed max-min
// fairness (to 1e-8 relative, solved with and without them) on the 64-job
// instance with Gavel's pairs file and on the 96-job prefix of the
// 2048-job instance, and leaves out some of their pair variables.
func TestWithoutDominatedPairs(t *testing.T) {
	for _, inst := range packedInstances(t, 96) {
		reduced := withoutDominatedPairs(inst, inst.Throughputs)
		before, after := pairVars(inst), pairVars(reduced)
		if after >= before {
			t.Errorf("%d jobs: %d of %d pair variables left", len(inst.Jobs), after, before)
		}
		level, sum := jobLevels(t, inst)
		rLevel, rSum := jobLevels(t, reduced)
		t.Logf("%d jobs: %d of %d pair variables left; level %.12g (%.12g), Pareto sum %.12g (%.12g)", len(inst.Jobs), after, before, level, rLevel, sum, rSum)
		if math.Abs(rLevel-level) > 1e-8*level || math.Abs(rSum-sum) > 1e-8*sum {
			t.Errorf("%d jobs: level %.12g and sum %.12g without dominated pairs, %.12g and %.12g with", len(inst.Jobs), rLevel, rSum, level, sum)
		}
	}
}

// pairVars counts the pair variables of inst's packed allocation LP.
func pairVars(inst *Instance) int {
	n := 0
	for _, vars := range newAllocLP(inst, inst.Throughputs, true).px {
		for _, v := range vars {
			if v >= 0 {
				n++
			}
		}
	}
	return n
}
