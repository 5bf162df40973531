package gavel

import (
	"context"
	"math"
	"strings"
	"testing"
)

// identicalInstance has n identical single-GPU jobs on g identical GPUs.
func identicalInstance(weights []float64, g int) *Instance {
	inst := &Instance{WorkerTypes: []string{"v100"}, NumWorkers: []int{g}}
	for m, w := range weights {
		inst.Jobs = append(inst.Jobs, Job{ID: m, ScaleFactor: 1, PriorityWeight: w, NumSteps: 1000})
		inst.Throughputs = append(inst.Throughputs, []float64{10})
	}
	return inst
}

// TestWaterFillingPaperExample checks §5.4.3: weights 3,1,1,1 on 4 identical
// GPUs; the max-min LP's optimum is 1/3 (job 1 gets a whole GPU, the others
// at least 1/3, the paper's vertex leaving 2/3 GPU idle each); water
// filling, and the Pareto step of max_min_fairness_perf, give everyone a
// whole GPU.
func TestWaterFillingPaperExample(t *testing.T) {
	inst := identicalInstance([]float64{3, 1, 1, 1}, 4)
	first := allocate(t, "max_min_fairness_perf", inst)
	if math.Abs(first.Objective-1.0/3) > 1e-7 {
		t.Fatalf("max-min objective %v, paper 1/3", first.Objective)
	}
	for _, name := range []string{"max_min_fairness_perf", "max_min_fairness_water_filling_perf"} {
		al := allocate(t, name, inst)
		for m := range inst.Jobs {
			if math.Abs(al.X[m][0]-1) > 1e-6 {
				t.Fatalf("%s: X = %v, paper all 1", name, al.X)
			}
		}
	}
}

// TestHierarchicalFIFOAndFairness: two entities of weight 1 on 2 GPUs, one
// fair across its two jobs, one FIFO: fair jobs get 1/2 GPU each, the
// earlier FIFO job a whole GPU, the later one nothing.
func TestHierarchicalFIFOAndFairness(t *testing.T) {
	inst := identicalInstance([]float64{1, 1, 1, 1}, 2)
	for m, e := range []string{"product", "product", "research", "research"} {
		inst.Jobs[m].Entity = e
	}
	inst.Jobs[2].ArrivalSeconds, inst.Jobs[3].ArrivalSeconds = 5, 1
	al := allocate(t, "max_min_fairness_water_filling_perf", inst, WithEntityPolicy("research", "fifo"))
	for m, want := range []float64{0.5, 0.5, 0, 1} {
		if math.Abs(al.X[m][0]-want) > 1e-6 {
			t.Fatalf("X = %v, want [0.5 0.5 0 1]", al.X)
		}
	}
}

// TestWaterFillingBottleneck: a job that can only use the K80 saturates at
// its share while the others keep gaining on the V100s.
func TestWaterFillingBottleneck(t *testing.T) {
	inst := &Instance{WorkerTypes: []string{"k80", "v100"}, NumWorkers: []int{1, 2},
		Jobs:        []Job{{ID: 0, ScaleFactor: 1, PriorityWeight: 1}, {ID: 1, ScaleFactor: 1, PriorityWeight: 1}, {ID: 2, ScaleFactor: 1, PriorityWeight: 1}},
		Throughputs: [][]float64{{1, 0}, {1, 4}, {1, 4}}}
	al := allocate(t, "max_min_fairness_water_filling_perf", inst)
	// Job 0 gets the whole K80; jobs 1 and 2 a whole V100 each (Pareto efficient).
	want := [][]float64{{1, 0}, {0, 1}, {0, 1}}
	for m := range want {
		for j := range want[m] {
			if math.Abs(al.X[m][j]-want[m][j]) > 1e-6 {
				t.Fatalf("X = %v, want %v", al.X, want)
			}
		}
	}
}

// TestMakespanMatchesBruteForce: for 2 jobs on 1 GPU type the optimal
// makespan is max(sum of work / capacity, each job alone at full speed).
func TestMakespanMatchesBruteForce(t *testing.T) {
	inst := &Instance{WorkerTypes: []string{"v100"}, NumWorkers: []int{1},
		Jobs:        []Job{{ID: 0, ScaleFactor: 1, PriorityWeight: 1, NumSteps: 100}, {ID: 1, ScaleFactor: 1, PriorityWeight: 1, NumSteps: 300}},
		Throughputs: [][]float64{{10}, {10}}}
	al := allocate(t, "min_total_duration_perf", inst)
	if math.Abs(al.Objective-40) > 1e-6 { // (100+300)/10 steps/s on one GPU
		t.Fatalf("makespan %v, want 40 s", al.Objective)
	}
	// Makespan is never worse than FIFO's makespan on the same instance.
	inst64 := loadInstance(t, "sim_k80-36_p100-36_v100-36_N64_seed0")
	ms := allocate(t, "min_total_duration_perf", inst64)
	ff := allocate(t, "fifo_perf", inst64)
	r, _ := remainingSteps(inst64)
	if fifoMS := makespanOf(inst64, inst64.Throughputs, ff, r); ms.Objective > fifoMS*(1+1e-9) {
		t.Fatalf("makespan policy %v s worse than FIFO's %v s", ms.Objective, fifoMS)
	}
}

// TestPoliciesOnRealInstance runs every policy on the 64-job instance and
// checks validity and the orderings the paper's definitions imply.
func TestPoliciesOnRealInstance(t *testing.T) {
	inst := loadInstance(t, "sim_k80-36_p100-36_v100-36_N64_seed0")
	inst.PricePerHour = []float64{0.9, 1.46, 3.06}
	objective := map[string]float64{}
	for _, name := range PolicyNames() {
		var opts []Option
		if name == "min_makespan_budget_perf" {
			opts = append(opts, WithBudget(1e6))
		}
		if strings.HasSuffix(name, "_packed") {
			continue // TestPackedPolicies
		}
		al := allocate(t, name, inst, opts...)
		if math.IsNaN(al.Objective) || math.IsInf(al.Objective, 0) {
			t.Fatalf("%s: objective %v", name, al.Objective)
		}
		objective[name] = al.Objective
	}
	// Heterogeneity-aware max-min fairness is at least as fair (by its own
	// metric) as the agnostic allocation evaluated the same way.
	agn := allocate(t, "max_min_fairness", inst)
	minNorm := math.Inf(1)
	for m, eff := range effectiveThroughputs(inst, inst.Throughputs, agn) {
		minNorm = min(minNorm, eff*fairnessScale(inst, inst.Throughputs, m))
	}
	if objective["max_min_fairness_perf"] < minNorm-1e-9 {
		t.Errorf("aware max-min %v below agnostic allocation's %v", objective["max_min_fairness_perf"], minNorm)
	}
	// Water filling keeps the max-min optimum as its minimum.
	if math.Abs(objective["max_min_fairness_water_filling_perf"]-objective["max_min_fairness_perf"]) > 1e-6 {
		t.Errorf("water filling minimum %v != max-min %v", objective["max_min_fairness_water_filling_perf"], objective["max_min_fairness_perf"])
	}
	// A generous budget reaches the unconstrained makespan.
	if math.Abs(objective["min_makespan_budget_perf"]-objective["min_total_duration_perf"]) > 1e-5*objective["min_total_duration_perf"] {
		t.Errorf("makespan with a huge budget %v != min makespan %v", objective["min_makespan_budget_perf"], objective["min_total_duration_perf"])
	}
	t.Log(objective)
}

func TestPackedPolicies(t *testing.T) {
	inst := loadInstance(t, "sim_k80-36_p100-36_v100-36_N64_seed0")
	plain := map[string]float64{}
	for _, name := range []string{"max_min_fairness_perf", "max_sum_throughput_perf", "min_total_duration_perf"} {
		plain[name] = allocate(t, name, inst).Objective
	}
	if err := PairsFromTable(inst, DefaultThroughputs()); err != nil {
		t.Fatal(err)
	}
	// §5.4.4: solutions with colocation are always at least as good.
	for name, better := range map[string]func(packed, plain float64) bool{
		"max_min_fairness":   func(p, q float64) bool { return p >= q-1e-7 },
		"max_sum_throughput": func(p, q float64) bool { return p >= q-1e-6 },
		"min_total_duration": func(p, q float64) bool { return p <= q*(1+1e-7) },
	} {
		perf := name + "_perf"
		got := allocate(t, name+"_packed", inst).Objective
		if !better(got, plain[perf]) {
			t.Errorf("%s_packed objective %v worse than %s %v", name, got, perf, plain[perf])
		}
		t.Logf("%s: packed %v, isolated %v", name, got, plain[perf])
	}
}

func TestPolicyErrors(t *testing.T) {
	if _, err := PolicyByName("nope"); err == nil || !strings.Contains(err.Error(), "unknown policy") {
		t.Errorf("unknown policy: %v", err)
	}
	if _, err := PolicyByName("min_makespan_budget_perf"); err == nil || !strings.Contains(err.Error(), "budget") {
		t.Errorf("missing budget: %v", err)
	}
	if _, err := PolicyByName("max_min_fairness_water_filling_perf", WithEntityPolicy("a", "lottery")); err == nil {
		t.Error("unknown entity policy accepted")
	}
	inst := identicalInstance([]float64{1, 1}, 1)
	inst.PricePerHour = []float64{3}
	inst.Jobs[0].SLOSeconds = 50 // needs 1000/50 = 20 steps/s > 10
	p, _ := PolicyByName("min_cost_slo_perf")
	if _, err := p.Allocate(context.Background(), inst); err == nil || !strings.Contains(err.Error(), "SLO needs 20 steps/s") {
		t.Errorf("unmeetable SLO: %v", err)
	}
	// Each SLO alone is meetable, both together are not (one GPU).
	inst.Jobs[0].SLOSeconds, inst.Jobs[1].SLOSeconds = 150, 150
	if _, err := p.Allocate(context.Background(), inst); err == nil || !strings.Contains(err.Error(), "cannot all be met") {
		t.Errorf("jointly unmeetable SLOs: %v", err)
	}
	p, _ = PolicyByName("min_makespan_budget_perf", WithBudget(1e-9))
	if _, err := p.Allocate(context.Background(), inst); err == nil || !strings.Contains(err.Error(), "below") {
		t.Errorf("tiny budget: %v", err)
	}
	inst.Throughputs[1][0] = -1
	if _, err := p.Allocate(context.Background(), inst); err == nil || !strings.Contains(err.Error(), "instance.throughputs[1][0]") {
		t.Errorf("negative throughput: %v", err)
	}
}

// FuzzAllocate runs the policies on arbitrary small parsed instances: any
// instance that validates gets a valid allocation or an error, never a
// panic or NaN.
func FuzzAllocate(f *testing.F) {
	f.Add([]byte(`{"worker_types":["v100","k80"],"num_workers":[1,1],"jobs":[{"id":0,"scale_factor":1,"num_steps":100},{"id":1,"scale_factor":1,"num_steps":50,"priority_weight":3}],"throughputs":[[40,10],[12,4]]}`))
	f.Add([]byte(`{"worker_types":["a","b","c"],"num_workers":[2,1,4],"jobs":[{"id":3,"scale_factor":2,"num_steps":1e6,"elapsed_s":100,"slo_s":1e9},{"id":1,"scale_factor":1,"num_steps":1e-3}],"throughputs":[[0,5,1e-4],[1e6,0,0]],"price_per_hour":[1,2,3]}`))
	f.Add([]byte(`{"worker_types":["v100","k80"],"num_workers":[4,2],"jobs":[{"id":0,"scale_factor":2,"num_steps":100,"elapsed_s":10,"slo_s":1e6},{"id":1,"scale_factor":2,"num_steps":50},{"id":2,"scale_factor":1,"num_steps":70}],"throughputs":[[10,3],[5,2],[2.9,1]],"unconsolidated_throughputs":[[2,3],[6,2.5],[100,0]],"price_per_hour":[3,1]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		inst, err := ParseInstance(data)
		if err != nil || len(inst.Jobs) > 6 || len(inst.WorkerTypes) > 4 {
			return
		}
		for _, name := range PolicyNames() {
			p, err := PolicyByName(name, WithBudget(100))
			if err != nil {
				t.Fatal(err)
			}
			al, err := p.Allocate(context.Background(), inst)
			if err != nil {
				continue
			}
			if math.IsNaN(al.Objective) {
				t.Fatalf("%s: NaN objective", name)
			}
			checkValid(t, inst, al)
		}
	})
}

// TestPolicyRegistry checks the traits every policy registers: a title
// and section, a baseline that is a registered heterogeneity-agnostic
// policy, and agnostic policies that are their own baseline and never
// share space.
func TestPolicyRegistry(t *testing.T) {
	for _, info := range Policies() {
		if info.Title == "" || info.Section == "" || info.Objective == "" {
			t.Errorf("%s: title %q, section %q, objective %q: all required", info.Name, info.Title, info.Section, info.Objective)
		}
		base, ok := LookupPolicy(info.Baseline)
		switch {
		case !ok:
			t.Errorf("%s: baseline %q is not a policy", info.Name, info.Baseline)
		case base.HeterogeneityAware:
			t.Errorf("%s: baseline %q is heterogeneity-aware", info.Name, info.Baseline)
		case !info.HeterogeneityAware && info.Baseline != info.Name:
			t.Errorf("%s: agnostic, but its baseline is %q", info.Name, info.Baseline)
		}
		if !info.HeterogeneityAware && info.SpaceSharing {
			t.Errorf("%s: agnostic policies see no co-located pairs", info.Name)
		}
	}
	if got := SpaceSharing("max_min_fairness_packed"); !got {
		t.Errorf("SpaceSharing(max_min_fairness_packed) = false")
	}
	if got := SpaceSharing("no_such_policy"); got {
		t.Errorf("SpaceSharing(no_such_policy) = true")
	}
}
