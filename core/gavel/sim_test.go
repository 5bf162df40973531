package gavel

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// equalShare is a trivially correct test policy: every job gets the same
// time fraction min(1/k, W_j/Σ sf) of every worker type it can run on.
type equalShare struct{}

func (equalShare) Name() string { return "test_equal_share" }

func (equalShare) Allocate(_ context.Context, inst *Instance) (*Allocation, error) {
	sumSF := 0
	for _, j := range inst.Jobs {
		sumSF += j.ScaleFactor
	}
	k := len(inst.WorkerTypes)
	x := make([][]float64, len(inst.Jobs))
	for i := range x {
		x[i] = make([]float64, k)
		for j := range x[i] {
			if inst.Throughputs[i][j] > 0 {
				x[i][j] = math.Min(1/float64(k), float64(inst.NumWorkers[j])/float64(sumSF))
			}
		}
	}
	return &Allocation{X: x}, nil
}

// fixedPolicy returns the same allocation row for every job.
type fixedPolicy struct{ row []float64 }

func (fixedPolicy) Name() string { return "test_fixed" }

func (p fixedPolicy) Allocate(_ context.Context, inst *Instance) (*Allocation, error) {
	x := make([][]float64, len(inst.Jobs))
	for i := range x {
		x[i] = append([]float64(nil), p.row...)
	}
	return &Allocation{X: x}, nil
}

var testCluster = ClusterSpec{WorkerTypes: []string{"k80", "p100", "v100"}, NumWorkers: []int{4, 4, 4}}

// TestSimulateSingleJobExact checks a lone job's completion time against
// the round arithmetic done by hand: full rounds of int(T·360) steps, then
// the remainder.
func TestSimulateSingleJobExact(t *testing.T) {
	k := JobKey{"ResNet-50 (batch size 64)", 1}
	tput, _ := DefaultThroughputs().Isolated("v100", k)
	const steps = 100000.0
	job := Job{ID: 0, JobType: k.Model, ScaleFactor: 1, PriorityWeight: 1, NumSteps: steps, ArrivalSeconds: 50}
	prices := []float64{0.5, 1, 2} // dollars per GPU-hour of k80, p100, v100
	res, err := Simulate(context.Background(), SimConfig{Cluster: testCluster, Policy: fixedPolicy{[]float64{0, 0, 1}}, Jobs: []Job{job}, PricePerHour: prices})
	if err != nil {
		t.Fatal(err)
	}
	perRound := math.Floor(tput * 360)
	full := math.Floor(steps / perRound)
	want := full*perRound/tput + (steps-full*perRound)/tput
	if got := res.AvgJCTSeconds; math.Abs(got-want) > 1e-6*want {
		t.Fatalf("JCT = %v, want %v", got, want)
	}
	if res.Rounds != int(full)+1 || res.MakespanSeconds != res.AvgJCTSeconds {
		t.Fatalf("rounds %d makespan %v, want %d and the JCT", res.Rounds, res.MakespanSeconds, int(full)+1)
	}
	// One V100 of 12 GPUs busy the whole time; it renews its lease each round.
	if math.Abs(res.Utilization-1.0/12) > 1e-9 || res.LeaseRenewals != res.Rounds-1 {
		t.Fatalf("utilization %v (want 1/12), lease renewals %d", res.Utilization, res.LeaseRenewals)
	}
	if len(res.UtilizationOverTime) == 0 {
		t.Fatal("no utilization series")
	}
	for i, u := range res.UtilizationOverTime {
		if math.Abs(u.Utilization-1.0/12) > 1e-9 {
			t.Fatalf("utilization over time [%d] = %+v, want 1/12 throughout", i, u)
		}
	}
	if want := res.MakespanSeconds / 3600 * prices[2]; math.Abs(res.CostDollars-want) > 1e-9 {
		t.Fatalf("cost %v, want %v", res.CostDollars, want)
	}
}

// TestSimulateInvariants runs a continuous multi-GPU trace and checks that
// every job completes no faster than alone on its best GPU, metrics are in
// range, and the run is deterministic.
func TestSimulateInvariants(t *testing.T) {
	jobs, err := GenerateTrace(TraceConfig{NumJobs: 60, JobsPerHour: 6, Seed: 3, MultiGPU: true, SLOs: true})
	if err != nil {
		t.Fatal(err)
	}
	cluster := ClusterSpec{WorkerTypes: []string{"k80", "p100", "v100"}, NumWorkers: []int{8, 8, 8}}
	progress := 0
	cfg := SimConfig{Cluster: cluster, Policy: equalShare{}, Jobs: jobs, Progress: func(done, total int) {
		if done < progress || total != 60 {
			t.Fatalf("progress %d/%d after %d", done, total, progress)
		}
		progress = done
	}}
	res, err := Simulate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.WindowJobs != 60 || res.JobsCompleted != 60 || progress != 60 {
		t.Fatalf("window %d completed %d progress %d, want 60", res.WindowJobs, res.JobsCompleted, progress)
	}
	checkNotFasterThanAlone(t, res, jobs, DefaultThroughputs(), cluster.WorkerTypes)
	for _, o := range res.Jobs {
		if !(o.FinishTimeFairness > 0) {
			t.Errorf("job %d: FTF %v", o.ID, o.FinishTimeFairness)
		}
	}
	if !(res.Utilization > 0 && res.Utilization <= 1) || res.JobsWithSLO != 60 || res.SLOViolations > 60 {
		t.Errorf("utilization %v, SLO %d/%d", res.Utilization, res.SLOViolations, res.JobsWithSLO)
	}
	progress = 0
	again, err := Simulate(context.Background(), cfg)
	if err != nil || !reflect.DeepEqual(res, again) {
		t.Fatalf("second run differs (err %v)", err)
	}
}

// checkNotFasterThanAlone asserts that no job of res finished sooner than
// its steps at its best throughput on workerTypes, in either placement
// (the simulator charges a spread placement the "_unconsolidated" value,
// which Gavel's data sometimes measure higher). jobs is the trace by ID.
func checkNotFasterThanAlone(t *testing.T, res *SimResult, jobs []Job, tt *ThroughputTable, workerTypes []string) {
	t.Helper()
	for _, o := range res.Jobs {
		best := 0.0
		for _, wt := range workerTypes {
			for _, consolidated := range []bool{true, false} {
				v, _ := tt.Placed(wt, JobKey{o.JobType, o.ScaleFactor}, consolidated)
				best = math.Max(best, v)
			}
		}
		if lb := jobs[o.ID].NumSteps / best; o.JCTSeconds < lb*(1-1e-9) {
			t.Errorf("job %d (%s ×%d) finished in %v s, faster than alone at its best (%v s)", o.ID, o.JobType, o.ScaleFactor, o.JCTSeconds, lb)
		}
	}
}

// TestSimulateWindow checks that only the window's jobs are averaged and
// that the simulation stops once they complete.
func TestSimulateWindow(t *testing.T) {
	jobs, _ := GenerateTrace(TraceConfig{NumJobs: 80, JobsPerHour: 8, Seed: 5})
	res, err := Simulate(context.Background(), SimConfig{Cluster: testCluster, Policy: equalShare{}, Jobs: jobs, WindowFrom: 10, WindowTo: 20})
	if err != nil {
		t.Fatal(err)
	}
	if res.WindowJobs != 10 || res.Jobs[0].ID != 10 || res.Jobs[9].ID != 19 {
		t.Fatalf("window jobs %d (%v..)", res.WindowJobs, res.Jobs[0].ID)
	}
	if res.JobsCompleted >= 80 {
		t.Errorf("simulated all %d jobs; should stop after the window", res.JobsCompleted)
	}
	sum := 0.0
	for _, o := range res.Jobs {
		sum += o.JCTSeconds
	}
	if math.Abs(sum/10-res.AvgJCTSeconds) > 1e-9 {
		t.Errorf("avg JCT %v, want %v", res.AvgJCTSeconds, sum/10)
	}
}

// TestSimulateWorkLimit: a single job's work is its rounds (one active job
// each, and one allocation of one job adds 1 / AllocationWorkDivisor,
// rounded down to 0); a trace runs to the end with MaxWork at its work and
// stops with a *WorkLimitError one unit below it.
func TestSimulateWorkLimit(t *testing.T) {
	job := Job{ID: 0, JobType: "ResNet-50 (batch size 64)", ScaleFactor: 1, PriorityWeight: 1, NumSteps: 100000}
	one, err := Simulate(context.Background(), SimConfig{Cluster: testCluster, Policy: fixedPolicy{[]float64{0, 0, 1}}, Jobs: []Job{job}})
	if err != nil {
		t.Fatal(err)
	}
	if one.Work != int64(one.Rounds) || one.Rounds < 2 {
		t.Fatalf("one job: work %d, want its %d rounds", one.Work, one.Rounds)
	}
	jobs, _ := GenerateTrace(TraceConfig{NumJobs: 40, JobsPerHour: 20, Seed: 5})
	cfg := SimConfig{Cluster: testCluster, Policy: equalShare{}, Jobs: jobs}
	full, err := Simulate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if full.Work <= int64(full.Rounds) {
		t.Fatalf("40 jobs: work %d, want more than its %d rounds", full.Work, full.Rounds)
	}
	cfg.MaxWork = full.Work
	if again, err := Simulate(context.Background(), cfg); err != nil || again.AvgJCTSeconds != full.AvgJCTSeconds {
		t.Fatalf("at MaxWork = its work: %v, %+v", err, again)
	}
	cfg.MaxWork = full.Work - 1
	_, err = Simulate(context.Background(), cfg)
	var limit *WorkLimitError
	if !errors.As(err, &limit) || limit.MaxWork != cfg.MaxWork || limit.Completed >= len(jobs) || limit.Active < 1 {
		t.Fatalf("past MaxWork: err = %v, want a WorkLimitError with jobs left", err)
	}
}

func TestSimulateCancel(t *testing.T) {
	jobs, _ := GenerateTrace(TraceConfig{NumJobs: 50, JobsPerHour: 8, Seed: 5})
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	_, err := Simulate(ctx, SimConfig{Cluster: testCluster, Policy: equalShare{}, Jobs: jobs, Progress: func(int, int) {
		calls++
		if calls == 3 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// badPolicy returns NaN allocations.
type badPolicy struct{}

func (badPolicy) Name() string { return "test_nan" }

func (badPolicy) Allocate(_ context.Context, inst *Instance) (*Allocation, error) {
	return fixedPolicy{[]float64{math.NaN(), 0, 0}}.Allocate(context.Background(), inst)
}

func TestSimulateErrors(t *testing.T) {
	ok := Job{ID: 0, JobType: "A3C", ScaleFactor: 1, PriorityWeight: 1, NumSteps: 100}
	with := func(f func(*SimConfig)) SimConfig {
		cfg := SimConfig{Cluster: testCluster, Policy: equalShare{}, Jobs: []Job{ok}}
		f(&cfg)
		return cfg
	}
	cases := map[string]SimConfig{
		"unknown job type": with(func(c *SimConfig) { c.Jobs = []Job{{JobType: "GPT-5", ScaleFactor: 1, PriorityWeight: 1, NumSteps: 1}} }),
		"worker_types[0]: unknown worker type": with(func(c *SimConfig) {
			c.Cluster = ClusterSpec{WorkerTypes: []string{"a100"}, NumWorkers: []int{1}}
		}),
		"num_workers[0]": with(func(c *SimConfig) {
			c.Cluster = ClusterSpec{WorkerTypes: []string{"v100"}, NumWorkers: []int{-1}}
		}),
		"at least one GPU": with(func(c *SimConfig) {
			c.Cluster = ClusterSpec{WorkerTypes: []string{"v100"}, NumWorkers: []int{0}}
		}),
		"cannot run": with(func(c *SimConfig) { c.Jobs[0].ScaleFactor = 8; c.Jobs[0].JobType = "LM (batch size 5)" }),
		"num_steps": with(func(c *SimConfig) {
			c.Jobs = []Job{{JobType: "A3C", ScaleFactor: 1, PriorityWeight: 1, NumSteps: math.Inf(1)}}
		}),
		"duplicate":       with(func(c *SimConfig) { c.Jobs = []Job{ok, ok} }),
		"window":          with(func(c *SimConfig) { c.WindowFrom, c.WindowTo = 5, 9 }),
		"[0][0]":          with(func(c *SimConfig) { c.Policy = badPolicy{} }),
		"policy":          with(func(c *SimConfig) { c.Policy = nil }),
		"price_per_hour":  with(func(c *SimConfig) { c.PricePerHour = []float64{1} }),
		"jobs: must not":  with(func(c *SimConfig) { c.Jobs = nil }),
		"round_s":         with(func(c *SimConfig) { c.RoundSeconds = -1 }),
		"priority_weight": with(func(c *SimConfig) { c.Jobs[0].PriorityWeight = 0 }),
	}
	for want, cfg := range cases {
		res, err := Simulate(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v (result %v)", want, err, res)
		}
	}
}

// BenchmarkSimulateEqualShare measures the simulator without an LP: 500
// continuous jobs on 36/36/36.
func BenchmarkSimulateEqualShare(b *testing.B) {
	jobs, _ := GenerateTrace(TraceConfig{NumJobs: 500, JobsPerHour: 5.6, Seed: 0})
	cluster := ClusterSpec{WorkerTypes: []string{"k80", "p100", "v100"}, NumWorkers: []int{36, 36, 36}}
	for b.Loop() {
		if _, err := Simulate(context.Background(), SimConfig{Cluster: cluster, Policy: equalShare{}, Jobs: jobs}); err != nil {
			b.Fatal(err)
		}
	}
}

// pairOnly runs every offered pair on the last worker type and no job alone.
type pairOnly struct{}

func (pairOnly) Name() string { return "test_pair_only" }

func (pairOnly) Allocate(_ context.Context, inst *Instance) (*Allocation, error) {
	k := len(inst.WorkerTypes)
	a := &Allocation{X: make([][]float64, len(inst.Jobs)), PairX: make([][]float64, len(inst.Pairs))}
	for i := range a.X {
		a.X[i] = make([]float64, k)
	}
	for p := range a.PairX {
		a.PairX[p] = make([]float64, k)
		a.PairX[p][k-1] = 1
	}
	return a, nil
}

// TestSimulateSpaceSharing checks that a co-located pair runs both jobs on
// the same GPU at their co-located throughputs, by hand arithmetic.
func TestSimulateSpaceSharing(t *testing.T) {
	a, b := JobKey{"A3C", 1}, JobKey{"ResNet-18 (batch size 64)", 1}
	pair, err := DefaultThroughputs().Colocated("v100", a, b)
	if err != nil || pair[0] <= 0 || pair[1] <= 0 {
		t.Fatalf("need a co-locatable pair, got %v %v", pair, err)
	}
	const steps = 5000.0
	jobs := []Job{
		{ID: 0, JobType: a.Model, ScaleFactor: 1, PriorityWeight: 1, NumSteps: steps},
		{ID: 1, JobType: b.Model, ScaleFactor: 1, PriorityWeight: 1, NumSteps: steps},
	}
	cluster := ClusterSpec{WorkerTypes: []string{"v100"}, NumWorkers: []int{1}}
	res, err := Simulate(context.Background(), SimConfig{Cluster: cluster, Policy: pairOnly{}, Jobs: jobs, SpaceSharing: true})
	if err != nil {
		t.Fatal(err)
	}
	// The job with the higher co-located throughput finishes first, while
	// still paired: full rounds of int(T·360) steps, then the remainder.
	first := 0
	if pair[1] > pair[0] {
		first = 1
	}
	tput := pair[first]
	perRound := math.Floor(tput * 360)
	full := math.Floor(steps / perRound)
	want := full*perRound/tput + (steps-full*perRound)/tput
	if got := res.Jobs[first].JCTSeconds; math.Abs(got-want) > 1e-6*want {
		t.Errorf("job %d JCT %v, want %v at co-located %v steps/s", first, got, want, tput)
	}
	if res.Jobs[1-first].JCTSeconds <= want {
		t.Errorf("job %d finished at %v, before its faster partner", 1-first, res.Jobs[1-first].JCTSeconds)
	}
}

// TestSimulatePlacementSensitive runs a multi-GPU trace with the policy
// told about unconsolidated throughputs: every job completes, none faster
// than alone on its best GPU type in its best placement, deterministically;
// an agnostic policy ignores placements, so its run is unchanged.
func TestSimulatePlacementSensitive(t *testing.T) {
	jobs, err := GenerateTrace(TraceConfig{NumJobs: 40, JobsPerHour: 4, Seed: 11, MultiGPU: true})
	if err != nil {
		t.Fatal(err)
	}
	cluster := ClusterSpec{WorkerTypes: []string{"k80", "p100", "v100"}, NumWorkers: []int{8, 8, 8}, GPUsPerServer: []int{4, 4, 4}}
	run := func(policy string, placement bool) *SimResult {
		t.Helper()
		p, err := PolicyByName(policy)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Simulate(context.Background(), SimConfig{Cluster: cluster, Policy: p, Jobs: jobs, PlacementSensitive: placement})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run("max_min_fairness_perf", true)
	if res.JobsCompleted != 40 {
		t.Fatalf("%d of 40 jobs completed", res.JobsCompleted)
	}
	checkNotFasterThanAlone(t, res, jobs, DefaultThroughputs(), cluster.WorkerTypes)
	if again := run("max_min_fairness_perf", true); !reflect.DeepEqual(res, again) {
		t.Fatal("second placement-sensitive run differs")
	}
	if a, b := run("max_min_fairness", true), run("max_min_fairness", false); !reflect.DeepEqual(a, b) {
		t.Fatalf("agnostic policy: placement-sensitive run differs (avg JCT %v vs %v)", a.AvgJCTSeconds, b.AvgJCTSeconds)
	}
}

// TestSimulateUnconsolidatedShare: three 2-GPU jobs on 6 GPUs. In servers
// of 3 the first two take one server each and the third gets the last GPU
// of each, so part of the multi-GPU time is unconsolidated; on one server
// of 6 none is.
func TestSimulateUnconsolidatedShare(t *testing.T) {
	var jobs []Job
	for id, steps := range []float64{5e5, 4e5, 3e5} {
		jobs = append(jobs, Job{ID: id, JobType: "ResNet-50 (batch size 64)", ScaleFactor: 2, PriorityWeight: 1, NumSteps: steps})
	}
	share := func(perServer int) float64 {
		t.Helper()
		cluster := ClusterSpec{WorkerTypes: []string{"v100"}, NumWorkers: []int{6}, GPUsPerServer: []int{perServer}}
		res, err := Simulate(context.Background(), SimConfig{Cluster: cluster, Policy: fixedPolicy{row: []float64{1}}, Jobs: jobs})
		if err != nil {
			t.Fatal(err)
		}
		return res.UnconsolidatedShare
	}
	if s := share(6); s != 0 {
		t.Errorf("one 6-GPU server: unconsolidated share %v, want 0", s)
	}
	if s := share(3); !(s > 0 && s < 1) {
		t.Errorf("3-GPU servers: unconsolidated share %v, want in (0, 1)", s)
	}
}

// TestSimulatePlacementSensitivityLowersJCT is the simulated version of
// TestPlacementServersLimitConsolidation: three 4-GPU jobs on 12 V100s in
// two 6-GPU servers, so only two run consolidated at once. Job 0 runs
// almost as fast spread (9 vs 10 steps/s), jobs 1 and 2 do not (2 vs 10).
// Placement-insensitive LAS gives all three the whole time consolidated;
// the mechanism consolidates the first two it places and spreads job 2,
// which crawls at 2 steps/s until a server frees up (JCTs about 10, 10 and
// 18 h for 3.6e5 steps each). The sensitive policy knows only two fit and
// gives job 0 most of the spread time (9.2 steps/s each, §5.4.1's level
// 3.68): every job finishes in about 10.9 h, a lower average.
func TestSimulatePlacementSensitivityLowersJCT(t *testing.T) {
	tt, err := DefaultThroughputs().WithJobTypes([]ExtraJobType{
		{Model: "spreads well", ScaleFactor: 4, Isolated: map[string]float64{"v100": 10}, Unconsolidated: map[string]float64{"v100": 9}},
		{Model: "communication-bound", ScaleFactor: 4, Isolated: map[string]float64{"v100": 10}, Unconsolidated: map[string]float64{"v100": 2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	jobs := []Job{{ID: 0, JobType: "spreads well"}, {ID: 1, JobType: "communication-bound"}, {ID: 2, JobType: "communication-bound"}}
	for i := range jobs {
		jobs[i].ScaleFactor, jobs[i].PriorityWeight, jobs[i].NumSteps = 4, 1, 3.6e5
	}
	cluster := ClusterSpec{WorkerTypes: []string{"k80", "p100", "v100"}, NumWorkers: []int{0, 0, 12}, GPUsPerServer: []int{6, 6, 6}}
	jct := map[bool]float64{}
	for _, sensitive := range []bool{false, true} {
		p, err := PolicyByName("max_min_fairness_perf")
		if err != nil {
			t.Fatal(err)
		}
		res, err := Simulate(context.Background(), SimConfig{Cluster: cluster, Policy: p, Jobs: jobs, Throughputs: tt, PlacementSensitive: sensitive})
		if err != nil {
			t.Fatal(err)
		}
		jct[sensitive] = res.AvgJCTSeconds / 3600
		t.Logf("sensitive %v: avg JCT %.2f h, unconsolidated share %.3f", sensitive, jct[sensitive], res.UnconsolidatedShare)
	}
	if !(jct[true] < 0.95*jct[false]) {
		t.Fatalf("placement-sensitive avg JCT %.2f h, want at least 5%% below the insensitive %.2f h", jct[true], jct[false])
	}
}
