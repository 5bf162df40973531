package gavel

import (
	"context"
	"math"
	"testing"
)

// ftfStallInstance loads the simulator instance on which finish-time
// fairness used to fail (testdata/regress/README.md).
func ftfStallInstance(t *testing.T) *Instance {
	t.Helper()
	return regressInstance(t, "ftf_stall_437jobs.json.gz")
}

// regressInstance loads a gzipped instance from testdata/regress.
func regressInstance(t *testing.T, name string) *Instance {
	t.Helper()
	return gzippedInstance(t, "testdata/regress/"+name)
}

// TestFinishTimeFairnessStallRegression: both FTF variants solve the
// instance that stalled the interior-point method, and every job's rho is
// within the reported objective.
func TestFinishTimeFairnessStallRegression(t *testing.T) {
	inst := ftfStallInstance(t)
	r, err := remainingSteps(inst)
	if err != nil {
		t.Fatal(err)
	}
	al := allocate(t, "finish_time_fairness_perf", inst)
	lo := 0.0
	for m, eff := range effectiveThroughputs(inst, inst.Throughputs, al) {
		job := inst.Jobs[m]
		denom := job.ElapsedSeconds + r[m]/equalThroughput(inst, inst.Throughputs, m)
		rho := (job.ElapsedSeconds + r[m]/eff) / denom
		if rho > al.Objective*(1+1e-9) {
			t.Errorf("job %d: rho %v above the objective %v", m, rho, al.Objective)
		}
		lo = max(lo, (job.ElapsedSeconds+r[m]/fastest(inst, inst.Throughputs, m))/denom)
	}
	if al.Objective < lo || al.Objective > 2*lo {
		t.Errorf("objective %v outside [%v, %v]", al.Objective, lo, 2*lo)
	}
	allocate(t, "finish_time_fairness", inst)
}

// TestSolveFallsBackToSimplex: the badly scaled LP (rows divided by a tiny
// need) that stalls the interior-point method is still solved, through the
// simplex fallback, to the optimum of the well-scaled formulation.
func TestSolveFallsBackToSimplex(t *testing.T) {
	inst := ftfStallInstance(t)
	r, err := remainingSteps(inst)
	if err != nil {
		t.Fatal(err)
	}
	// The first feasibility test of the bisection, p = 2*lo.
	n := len(inst.Jobs)
	denom, fast, need := make([]float64, n), make([]float64, n), make([]float64, n)
	lo := 0.0
	for m, job := range inst.Jobs {
		denom[m] = job.ElapsedSeconds + r[m]/equalThroughput(inst, inst.Throughputs, m)
		fast[m] = fastest(inst, inst.Throughputs, m)
		lo = max(lo, (job.ElapsedSeconds+r[m]/fast[m])/denom[m])
	}
	for m, job := range inst.Jobs {
		need[m] = r[m] / (2*lo*denom[m] - job.ElapsedSeconds)
	}
	var s [2]float64
	for k, div := range [][]float64{need, fast} {
		a, v := dividedThroughputLP(inst, inst.Throughputs, need, div, false)
		sol, err := a.solve(context.Background())
		if err != nil {
			t.Fatalf("rows divided by %s: %v", []string{"need", "fastest"}[k], err)
		}
		s[k] = sol[v]
	}
	if math.Abs(s[0]-s[1]) > 1e-6*s[1] {
		t.Errorf("s = %v (rows / need) vs %v (rows / fastest)", s[0], s[1])
	}
}
