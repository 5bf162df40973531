package gavel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// twoTypeJob is one job on a cheap slow and an expensive fast GPU type.
func twoTypeJob(steps float64) *Instance {
	return &Instance{WorkerTypes: []string{"k80", "v100"}, NumWorkers: []int{1, 1}, PricePerHour: []float64{1, 8},
		Jobs:        []Job{{ID: 0, ScaleFactor: 1, PriorityWeight: 1, NumSteps: steps}},
		Throughputs: [][]float64{{10, 40}}}
}

// TestMinCostPicksCheapestThroughput: 10 steps/s per $1/h (36,000 steps/$)
// beats 40 per $8/h (18,000 steps/$), so the job runs on the K80 only.
func TestMinCostPicksCheapestThroughput(t *testing.T) {
	al := allocate(t, "min_cost_perf", twoTypeJob(100))
	if math.Abs(al.X[0][0]-1) > 1e-6 || al.X[0][1] > 1e-6 || math.Abs(al.Objective-36000) > 1e-6*36000 {
		t.Fatalf("X = %v objective %v, want [[1 0]] and 36,000 steps/$", al.X, al.Objective)
	}
}

// TestMinCostKeepsClusterBusy is §6.4.2's objective worked by hand: V100s at
// $3/h, K80s at $1/h; jobs A (30, 20 steps/s on V100, K80), B (40, 10) and
// C (12, 6) earn 10 and 20, 13.3 and 10, 4 and 6 steps/s per $/h. With 1
// V100 and 2 K80s every job runs all the time where it earns most (A and C
// on K80s, B on the V100): 39.3 × 3600 = 141,600 steps/$, every GPU busy.
// With 1 K80 the K80 goes to A (it loses 10 on the V100, C only 2), the
// V100 to B, and C waits: 33.3 × 3600 = 120,000 steps/$, both GPUs busy.
// The ratio of sums maximized before ran only the best ratio and left
// 255 of 256 jobs idle on the 256-job instance (issue 11, item 2).
func TestMinCostKeepsClusterBusy(t *testing.T) {
	for _, c := range []struct {
		k80  int
		want [][]float64
		obj  float64
	}{
		{2, [][]float64{{0, 1}, {1, 0}, {0, 1}}, 141600},
		{1, [][]float64{{0, 1}, {1, 0}, {0, 0}}, 120000},
	} {
		inst := &Instance{WorkerTypes: []string{"v100", "k80"}, NumWorkers: []int{1, c.k80}, PricePerHour: []float64{3, 1},
			Throughputs: [][]float64{{30, 20}, {40, 10}, {12, 6}}}
		for m := range 3 {
			inst.Jobs = append(inst.Jobs, Job{ID: m, ScaleFactor: 1, PriorityWeight: 1})
		}
		al := allocate(t, "min_cost_perf", inst)
		for m := range c.want {
			for j := range c.want[m] {
				if math.Abs(al.X[m][j]-c.want[m][j]) > 1e-6 {
					t.Fatalf("%d K80s: X = %v, want %v", c.k80, al.X, c.want)
				}
			}
		}
		if math.Abs(al.Objective-c.obj) > 1e-6*c.obj {
			t.Errorf("%d K80s: objective %v, want %v steps/$", c.k80, al.Objective, c.obj)
		}
	}
}

// TestMinCostSLO: an SLO of 100 steps / 4 s = 25 steps/s forces V100 time.
func TestMinCostSLO(t *testing.T) {
	inst := twoTypeJob(100)
	inst.Jobs[0].SLOSeconds = 4
	al := allocate(t, "min_cost_slo_perf", inst)
	if eff := effectiveThroughputs(inst, inst.Throughputs, al)[0]; eff < 25-1e-6 {
		t.Fatalf("throughput %v below the SLO's 25 steps/s (X = %v)", eff, al.X)
	}
	// The cheapest way to 25 steps/s mixes both types (x_v100 = 0.5 at full time).
	if math.Abs(al.X[0][1]-0.5) > 1e-6 || math.Abs(al.X[0][0]-0.5) > 1e-6 {
		t.Fatalf("X = %v, want [[0.5 0.5]]", al.X)
	}
}

// TestMakespanBudget: 36,000 steps; all-V100 finishes in 900 s for $2, all-K80
// in 3600 s for $1. With $1.50 the best mix runs 20% on the V100: 10+30*0.2 =
// 16 steps/s, makespan 2250 s.
func TestMakespanBudget(t *testing.T) {
	inst := twoTypeJob(36000)
	for _, c := range []struct{ budget, want float64 }{{1.5, 2250}, {5, 900}} {
		al := allocate(t, "min_makespan_budget_perf", inst, WithBudget(c.budget))
		if math.Abs(al.Objective-c.want) > 1e-5*c.want {
			t.Errorf("budget $%v: makespan %v, want %v (X = %v)", c.budget, al.Objective, c.want, al.X)
		}
		if cost := costOf(inst, al) * al.Objective; cost > c.budget*(1+1e-6) {
			t.Errorf("budget $%v: spends $%v", c.budget, cost)
		}
	}
}

// TestFinishTimeFairness checks rho on one GPU (10 steps/s) against closed
// forms. With n = 2 jobs, X^isolated is half the GPU: 5 steps/s, so jobs of
// 100 and 300 steps finish in isolation after D = 20 and 60 s. Equal
// shares are the isolated allocation: rho = 1 (the LAS normalizer used
// before gave 2). With 10 s elapsed for job 0, rho_0 = (10 + 10/x)/20 and
// rho_1 = 30/(60(1-x)) meet at x^2 + x - 1 = 0: x = (sqrt(5)-1)/2, rho =
// (3+sqrt(5))/4 (the old baseline gave x = sqrt(2)-1, rho = 1/(2-sqrt(2))).
func TestFinishTimeFairness(t *testing.T) {
	inst := identicalInstance([]float64{1, 1}, 1)
	inst.Jobs[0].NumSteps, inst.Jobs[1].NumSteps = 100, 300
	al := allocate(t, "finish_time_fairness_perf", inst)
	if math.Abs(al.Objective-1) > 1e-6 {
		t.Errorf("rho %v, want 1", al.Objective)
	}
	inst.Jobs[0].ElapsedSeconds = 10
	al = allocate(t, "finish_time_fairness_perf", inst)
	x0 := (math.Sqrt(5) - 1) / 2
	if want := (3 + math.Sqrt(5)) / 4; math.Abs(al.Objective-want) > 1e-6 || math.Abs(al.X[0][0]-x0) > 1e-6 {
		t.Errorf("rho %v X %v, want %v with x0 = %v", al.Objective, al.X, want, x0)
	}
}

// TestFinishTimeFairnessIsolatedBaseline checks X^isolated (§5.4.2) on
// hand-worked instances. The §5.4.1 example (1 V100, 1 K80; 3 jobs at
// 40/10, 12/4, 100/50 steps/s) gives each job 1/3 of each GPU; nothing has
// run yet, so rho_m = throughput(m, X^isolated)/throughput(m, X), and
// minimizing the max is max-min fairness normalized by X^isolated = 2/3 of
// X^equal (the LAS normalizer, whose optimum is 8/11): rho* = (2/3)/(8/11)
// = 11/12, where the LAS baseline gave 11/8. Multi-GPU: 4 GPUs, job A of 1
// GPU and B of 4, both 10 steps/s. X^isolated gives A 4/(2·1) = 2, capped
// at all of its time (10 steps/s), and B 4/(2·4) = 1/2 (5 steps/s), so
// rho_A = 1/x_A >= 1 and rho_B = 1/(2x_B); x_A = 1 leaves x_B = 3/4
// (rho_B = 2/3): rho* = 1. The LAS baseline (10 steps/s for both) gave
// 1.25 (x_A = x_B = 4/5), over-serving B by its scale factor.
func TestFinishTimeFairnessIsolatedBaseline(t *testing.T) {
	paper := &Instance{WorkerTypes: []string{"v100", "k80"}, NumWorkers: []int{1, 1},
		Throughputs: [][]float64{{40, 10}, {12, 4}, {100, 50}}}
	for m := range 3 {
		paper.Jobs = append(paper.Jobs, Job{ID: m, ScaleFactor: 1, PriorityWeight: 1, NumSteps: 1000})
	}
	multi := &Instance{WorkerTypes: []string{"v100"}, NumWorkers: []int{4}, Throughputs: [][]float64{{10}, {10}},
		Jobs: []Job{{ID: 0, ScaleFactor: 1, PriorityWeight: 1, NumSteps: 1000}, {ID: 1, ScaleFactor: 4, PriorityWeight: 1, NumSteps: 1000}}}
	for _, c := range []struct {
		name      string
		inst      *Instance
		want, old float64
	}{{"§5.4.1 example", paper, 11.0 / 12, 11.0 / 8}, {"multi-GPU", multi, 1, 1.25}} {
		al := allocate(t, "finish_time_fairness_perf", c.inst)
		if math.Abs(al.Objective-c.want) > 1e-6 {
			t.Errorf("%s: rho %v, want %v (the LAS baseline gave %v); X = %v", c.name, al.Objective, c.want, c.old, al.X)
		}
	}
	if got := isolatedThroughput([]float64{40, 10}, []int{1, 1}, 1, 3); math.Abs(got-50.0/3) > 1e-12 {
		t.Errorf("isolated throughput of job 0 of §5.4.1: %v, want 50/3", got)
	}
}

// TestMinCostSLOFallback: two jobs whose SLOs both need the only V100 for
// most of the time cannot both be met; the error wraps ErrSLOsUnmet, and
// RelaxSLOs drops the tighter SLO, after which the other one is met.
func TestMinCostSLOFallback(t *testing.T) {
	inst := twoTypeJob(100)
	inst.Jobs = append(inst.Jobs, Job{ID: 1, ScaleFactor: 1, PriorityWeight: 1, NumSteps: 100, SLOSeconds: 3})
	inst.Throughputs = append(inst.Throughputs, []float64{10, 40})
	inst.Jobs[0].SLOSeconds = 4 // needs 25 steps/s; job 1 needs 33.3 (the tighter)
	p, err := PolicyByName("min_cost_slo_perf")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Allocate(context.Background(), inst); !errors.Is(err, ErrSLOsUnmet) {
		t.Fatalf("error %v, want ErrSLOsUnmet", err)
	}
	if !RelaxSLOs(inst) || inst.Jobs[1].SLOSeconds != 0 || inst.Jobs[0].SLOSeconds != 4 {
		t.Fatalf("RelaxSLOs kept SLOs %v, %v; want job 1's dropped", inst.Jobs[0].SLOSeconds, inst.Jobs[1].SLOSeconds)
	}
	al := allocate(t, "min_cost_slo_perf", inst)
	if eff := effectiveThroughputs(inst, inst.Throughputs, al)[0]; eff < 25-1e-6 {
		t.Fatalf("job 0 gets %v steps/s, its SLO needs 25 (X = %v)", eff, al.X)
	}
	// An SLO already passed is dropped at once, the other kept.
	inst.Jobs[1].SLOSeconds, inst.Jobs[1].ElapsedSeconds = 10, 20
	if !RelaxSLOs(inst) || inst.Jobs[1].SLOSeconds != 0 || inst.Jobs[0].SLOSeconds != 4 {
		t.Fatalf("RelaxSLOs kept SLOs %v, %v; want only job 1's dropped", inst.Jobs[0].SLOSeconds, inst.Jobs[1].SLOSeconds)
	}
	if RelaxSLOs(&Instance{Jobs: []Job{{NumSteps: 1}}, Throughputs: [][]float64{{1}}, NumWorkers: []int{1}}) {
		t.Error("RelaxSLOs dropped an SLO from an instance without any")
	}
}

// TestMinCostSLOSimplexCycleRegression: the simulator instance on which the
// simplex cycled (testdata/regress/README.md) is solved, and every job's
// SLO throughput is met.
func TestMinCostSLOSimplexCycleRegression(t *testing.T) {
	inst := regressInstance(t, "cost_slo_cycle_78jobs.json.gz")
	r, err := remainingSteps(inst)
	if err != nil {
		t.Fatal(err)
	}
	need, err := sloNeeds(inst, r)
	if err != nil {
		t.Fatal(err)
	}
	al := allocate(t, "min_cost_slo_perf", inst)
	for m, eff := range effectiveThroughputs(inst, inst.Throughputs, al) {
		if eff < need[m]*(1-1e-6) {
			t.Errorf("job %d: %v steps/s, its SLO needs %v", m, eff, need[m])
		}
	}
}

// TestSLOErrorFormatsNumbers: the unmet-SLO error gives computed numbers
// to three significant digits, not Go's shortest round-trip form.
func TestSLOErrorFormatsNumbers(t *testing.T) {
	inst := twoTypeJob(1e4)
	inst.Jobs[0].SLOSeconds = 9 * 25.3 // needs 43.9 steps/s, more than either type gives
	p, err := PolicyByName("min_cost_slo_perf")
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Allocate(context.Background(), inst)
	f := fastest(inst, inst.Throughputs, 0)
	want := fmt.Sprintf("needs %s steps/s, at most %s on its fastest type", formatNum(1e4/(9*25.3)), formatNum(f))
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "43.92") {
		t.Fatalf("error %v, want it to contain %q", err, want)
	}
	for v, want := range map[float64]string{43.917: "43.9", 4.3917: "4.39", 0.012345: "0.0123", 12345.6: "12346", 999.94: "1000"} {
		if got := formatNum(v); got != want {
			t.Errorf("formatNum(%v) = %q, want %q", v, got, want)
		}
	}
}
