package gavel

import (
	"context"
	"math"
	"os"
	"testing"
)

// classLevels solves packed max-min fairness on inst both ways, one
// variable per job (maxMinLP, paretoStep) and per class (classFairLP), and
// returns each one's max-min level and Pareto sum (the sum over jobs of
// their scaled normalized throughputs), and the class LP's allocation.
func classLevels(t *testing.T, inst *Instance) (jobLevel, jobSum, classLevel, classSum float64, al *Allocation) {
	t.Helper()
	ctx, tt := context.Background(), inst.Throughputs
	jobLevel, jobSum = jobLevels(t, inst)
	cl := classesOf(inst, tt)
	if cl == nil {
		t.Fatal("classesOf: no classes")
	}
	f := classFairLP(inst, tt, cl)
	csol, err := solveMax(ctx, f.prob)
	if err != nil {
		t.Fatal(err)
	}
	csol2, err := f.pareto(ctx, csol)
	if err != nil {
		t.Fatal(err)
	}
	al = f.alloc(csol2)
	eff := effectiveThroughputs(inst, tt, al)
	for m := range inst.Jobs {
		classSum += fairnessScale(inst, tt, m) * eff[m]
	}
	return jobLevel, jobSum, csol[f.z], classSum, al
}

// jobLevels solves packed max-min fairness on inst with one variable per
// job and pair (maxMinLP, paretoStep) and returns the max-min level and
// the Pareto sum.
func jobLevels(t *testing.T, inst *Instance) (level, sum float64) {
	t.Helper()
	ctx, tt := context.Background(), inst.Throughputs
	a, z := maxMinLP(inst, tt, true)
	sol, err := a.solve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sol2, err := paretoStep(ctx, inst, tt, a, z, sol)
	if err != nil {
		t.Fatal(err)
	}
	return sol[z], paretoSum(inst, tt, a, sol2)
}

// TestClassFairLPMatchesJobLP: the class LP of packed max-min fairness has
// the max-min level and the Pareto optimum of the LP with one variable per
// job and pair (to 1e-8 relative), on the 64-job instance with Gavel's own
// pairs file and on the 256-job prefix of the 2048-job instance (whose
// Pareto optimum HiGHS computed: paretoHiGHS); its expanded allocation is
// valid and keeps every job at the level.
func TestClassFairLPMatchesJobLP(t *testing.T) {
	for _, inst := range packedInstances(t, 256) {
		jobLevel, jobSum, classLevel, classSum, al := classLevels(t, inst)
		t.Logf("%d jobs: level %.12g (classes %.12g), Pareto sum %.12g (classes %.12g)", len(inst.Jobs), jobLevel, classLevel, jobSum, classSum)
		if math.Abs(classLevel-jobLevel) > 1e-8*jobLevel {
			t.Errorf("%d jobs: max-min level %.12g by classes, %.12g by jobs", len(inst.Jobs), classLevel, jobLevel)
		}
		if math.Abs(classSum-jobSum) > 1e-8*jobSum {
			t.Errorf("%d jobs: Pareto sum %.12g by classes, %.12g by jobs", len(inst.Jobs), classSum, jobSum)
		}
		if len(inst.Jobs) == 256 && math.Abs(classSum-paretoHiGHS) > 1e-8*paretoHiGHS {
			t.Errorf("256 jobs: Pareto sum %.12g by classes, HiGHS %.12g", classSum, paretoHiGHS)
		}
		checkValid(t, inst, al)
		eff := effectiveThroughputs(inst, inst.Throughputs, al)
		for m := range inst.Jobs {
			if got := fairnessScale(inst, inst.Throughputs, m) * eff[m]; got < jobLevel*(1-1e-8) {
				t.Errorf("%d jobs: job %d at %.12g, below the level %.12g", len(inst.Jobs), m, got, jobLevel)
			}
		}
	}
}

// TestClassesOfNeedsSymmetry: classesOf declines instances whose pairs do
// not treat the jobs of a class alike (a pair missing, repeated, or with
// other throughputs) and instances without two interchangeable jobs, so
// those keep the LP with one variable per job.
func TestClassesOfNeedsSymmetry(t *testing.T) {
	inst := loadInstance(t, "sim_k80-36_p100-36_v100-36_N64_seed0")
	if err := PairsFromTable(inst, DefaultThroughputs()); err != nil {
		t.Fatal(err)
	}
	cl := classesOf(inst, inst.Throughputs)
	if cl == nil {
		t.Fatal("the 64-job instance: no classes")
	}
	t.Logf("64 jobs: %d classes, %d class pairs for %d pairs", len(cl.rep), len(cl.pairs), len(inst.Pairs))
	pairs := inst.Pairs
	other := Pair{A: pairs[0].A, B: pairs[0].B, Throughputs: append([][2]float64{}, pairs[0].Throughputs...)}
	other.Throughputs[0][0]++
	for name, ps := range map[string][]Pair{
		"missing":  pairs[1:],
		"repeated": append(append([]Pair{}, pairs...), pairs[0]),
		"other":    append([]Pair{other}, pairs[1:]...),
	} {
		inst.Pairs = ps
		if classesOf(inst, inst.Throughputs) != nil {
			t.Errorf("%s pair: classesOf found classes", name)
		}
	}
	inst.Pairs = pairs
	for m := range inst.Jobs {
		inst.Jobs[m].PriorityWeight = float64(m + 1) // no two jobs alike
	}
	if classesOf(inst, inst.Throughputs) != nil {
		t.Error("distinct weights: classesOf found classes")
	}
}

// packedInstances returns the 64-job instance with Gavel's own pairs file
// and the n-job prefix of the 2048-job instance with pairs from the
// throughput table.
func packedInstances(t *testing.T, n int) []*Instance {
	t.Helper()
	small := loadInstance(t, "sim_k80-36_p100-36_v100-36_N64_seed0")
	data, err := os.ReadFile("testdata/instances/sim_k80-36_p100-36_v100-36_N64_seed0.pairs.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := ParsePairs(data, small); err != nil {
		t.Fatal(err)
	}
	big := bigInstance(t, n)
	if err := PairsFromTable(big, DefaultThroughputs()); err != nil {
		t.Fatal(err)
	}
	return []*Instance{small, big}
}
