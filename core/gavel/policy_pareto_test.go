package gavel

import (
	"context"
	"testing"
)

// fourJobInstance is the degenerate case found in the simulator: ResNet-50
// bs64, Transformer bs128, A3C and LM bs20 on two GPUs, on 8 GPUs of each
// type, with Gavel's measured throughputs.
func fourJobInstance(t *testing.T) *Instance {
	t.Helper()
	tt := DefaultThroughputs()
	inst := &Instance{WorkerTypes: []string{"k80", "p100", "v100"}, NumWorkers: []int{8, 8, 8}}
	for i, k := range []JobKey{
		{"ResNet-50 (batch size 64)", 1}, {"Transformer (batch size 128)", 1}, {"A3C", 1}, {"LM (batch size 20)", 2},
	} {
		row := make([]float64, len(inst.WorkerTypes))
		for j, wt := range inst.WorkerTypes {
			v, err := tt.Isolated(wt, k)
			if err != nil {
				t.Fatal(err)
			}
			row[j] = v
		}
		inst.Jobs = append(inst.Jobs, Job{ID: i, JobType: k.Model, ScaleFactor: k.ScaleFactor, PriorityWeight: 1})
		inst.Throughputs = append(inst.Throughputs, row)
	}
	return inst
}

// TestMaxMinFairnessParetoEfficient: on the underloaded 4-job instance the
// aware LAS policies give every job at least what the agnostic policy gives
// it, and leave no usable worker type idle while a job gets less than all
// of its time.
func TestMaxMinFairnessParetoEfficient(t *testing.T) {
	inst := fourJobInstance(t)
	agn := effectiveThroughputs(inst, inst.Throughputs, allocate(t, "max_min_fairness", inst))
	for _, name := range []string{"max_min_fairness_perf", "max_min_fairness_packed", "max_min_fairness"} {
		in := *inst
		if name == "max_min_fairness_packed" {
			if err := PairsFromTable(&in, DefaultThroughputs()); err != nil {
				t.Fatal(err)
			}
		}
		al := allocate(t, name, &in)
		eff := effectiveThroughputs(&in, in.Throughputs, al)
		for m := range eff {
			if eff[m] < agn[m]*(1-1e-6) {
				t.Errorf("%s: job %d gets %.4g steps/s < agnostic %.4g (X=%v)", name, m, eff[m], agn[m], al.X)
			}
		}
		checkNoIdleWhileStarved(t, name, &in, al)
	}
}

// checkNoIdleWhileStarved fails if a job's total time is below 1 while a
// worker type it can run on has free capacity (not Pareto-efficient).
func checkNoIdleWhileStarved(t *testing.T, name string, inst *Instance, al *Allocation) {
	t.Helper()
	const tol = 1e-6
	free, share := freeCapacity(inst, al)
	for m, s := range share {
		if s >= 1-tol {
			continue
		}
		sf := inst.Jobs[m].ScaleFactor
		for j, f := range free {
			if inst.Throughputs[m][j] > 0 && sf <= inst.NumWorkers[j] && f >= float64(sf)*tol*1e3 {
				t.Errorf("%s: job %d has time %.4g < 1 while %s has %.3g free GPUs (X=%v)", name, m, s, inst.WorkerTypes[j], f, al.X)
			}
		}
	}
}

// TestAgnosticSpreadsByCapacity: agnostic policies split each job's time
// over worker types in proportion to their sizes (X_mj = x_m n_j / sum n).
func TestAgnosticSpreadsByCapacity(t *testing.T) {
	inst := fourJobInstance(t)
	inst.NumWorkers = []int{2, 4, 6}
	for m := range inst.Jobs {
		inst.Jobs[m].NumSteps = float64(1000 * (m + 1))
		inst.Jobs[m].ArrivalSeconds = float64(m)
	}
	for _, name := range []string{"max_min_fairness", "fifo", "finish_time_fairness"} {
		al := allocate(t, name, inst)
		for m, row := range al.X {
			x := row[0] + row[1] + row[2]
			if x <= 0 {
				t.Errorf("%s: job %d gets no time", name, m)
			}
			for j, v := range row {
				want := x * float64(inst.NumWorkers[j]) / 12
				if d := v - want; d > 1e-6 || d < -1e-6 {
					t.Errorf("%s: X[%d] = %v, want %v of x=%v on type %d", name, m, row, want, x, j)
				}
			}
		}
	}
}

// TestFillIdle: the fallback of the Pareto LP, applied to the degenerate
// first-LP vertex of the 4-job instance, loses no job's throughput and
// leaves no usable worker type idle while a job has time left.
func TestFillIdle(t *testing.T) {
	inst := fourJobInstance(t)
	a, _ := maxMinLP(inst, inst.Throughputs, false)
	sol, err := a.solve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	al := a.allocation(sol, 1)
	before := effectiveThroughputs(inst, inst.Throughputs, al)
	fillIdle(inst, inst.Throughputs, al)
	checkValid(t, inst, al)
	for m, eff := range effectiveThroughputs(inst, inst.Throughputs, al) {
		if eff < before[m]*(1-1e-12) {
			t.Errorf("job %d: %v steps/s after fillIdle, %v before", m, eff, before[m])
		}
	}
	checkNoIdleWhileStarved(t, "fillIdle", inst, al)
}
