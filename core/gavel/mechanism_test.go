package gavel

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// sinkhornAllocation returns a random allocation whose job rows sum to 1 and
// whose worker-type columns use exactly the cluster's GPUs
// (Σ_m X_mj·sf_m = W_j), so the mechanism has no idle GPU to fill.
func sinkhornAllocation(rng *rand.Rand, sfs, workers []int) [][]float64 {
	x := make([][]float64, len(sfs))
	for i := range x {
		x[i] = make([]float64, len(workers))
		for j := range x[i] {
			x[i][j] = 0.2 + rng.Float64()
		}
	}
	for range 2000 {
		for i := range x {
			s := 0.0
			for _, v := range x[i] {
				s += v
			}
			for j := range x[i] {
				x[i][j] /= s
			}
		}
		for j, w := range workers {
			s := 0.0
			for i := range x {
				s += x[i][j] * float64(sfs[i])
			}
			for i := range x {
				x[i][j] *= float64(w) / s
			}
		}
	}
	return x
}

// runRounds drives the mechanism for n rounds with fixed combinations,
// checking every round's placements, and returns the fraction of rounds each
// combination ran on each worker type.
func runRounds(t *testing.T, m *Mechanism, combos []Combination, n int) [][]float64 {
	t.Helper()
	got := make([][]float64, len(combos))
	for i := range got {
		got[i] = make([]float64, len(m.cluster.WorkerTypes))
	}
	for range n {
		ps, err := m.Schedule(combos)
		if err != nil {
			t.Fatal(err)
		}
		checkPlacements(t, m.cluster, combos, ps)
		for _, p := range ps {
			got[p.Combination][p.WorkerType]++
			m.Record(combos[p.Combination], p, m.roundSeconds)
		}
	}
	for i := range got {
		for j := range got[i] {
			got[i][j] /= float64(n)
		}
	}
	return got
}

// checkPlacements fails if a round over-subscribes a GPU, runs a job twice,
// gives a combination the wrong number of GPUs or a GPU out of range.
func checkPlacements(t *testing.T, cluster ClusterSpec, combos []Combination, ps []Placement) {
	t.Helper()
	gpuTaken := map[[2]int]bool{}
	jobRuns := map[int]bool{}
	for _, p := range ps {
		c := combos[p.Combination]
		if !c.Runnable[p.WorkerType] {
			t.Fatalf("combination %v placed on worker type %d where it cannot run", c.JobIDs, p.WorkerType)
		}
		if len(p.Workers) != c.ScaleFactor {
			t.Fatalf("combination %v got %d GPUs, want %d", c.JobIDs, len(p.Workers), c.ScaleFactor)
		}
		for _, g := range p.Workers {
			if g < 0 || g >= cluster.NumWorkers[p.WorkerType] || gpuTaken[[2]int{p.WorkerType, g}] {
				t.Fatalf("GPU %d of type %d out of range or over-subscribed", g, p.WorkerType)
			}
			gpuTaken[[2]int{p.WorkerType, g}] = true
		}
		for _, id := range c.JobIDs {
			if jobRuns[id] {
				t.Fatalf("job %d runs twice in one round", id)
			}
			jobRuns[id] = true
		}
	}
}

func singles(x [][]float64, sfs []int) []Combination {
	combos := make([]Combination, len(x))
	for i := range x {
		run := make([]bool, len(x[i]))
		for j := range run {
			run[j] = true
		}
		combos[i] = Combination{JobIDs: []int{i}, ScaleFactor: sfs[i], X: x[i], Runnable: run}
	}
	return combos
}

// TestMechanismHonoursAllocation checks that over many rounds the fraction of
// time each job receives on each worker type approaches X (§5.5).
func TestMechanismHonoursAllocation(t *testing.T) {
	cases := []struct {
		name    string
		sfs     []int
		workers []int
		tol     float64
	}{
		{"single-GPU", []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, []int{2, 3, 5}, 0.005},
		{"multi-GPU", []int{1, 1, 2, 1, 4, 1, 2, 1, 1, 2, 1, 1}, []int{4, 4, 8}, 0.03},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			x := sinkhornAllocation(rng, c.sfs, c.workers)
			m, err := NewMechanism(ClusterSpec{WorkerTypes: []string{"a", "b", "c"}, NumWorkers: c.workers}, 360)
			if err != nil {
				t.Fatal(err)
			}
			got := runRounds(t, m, singles(x, c.sfs), 3000)
			worst := 0.0
			for i := range x {
				for j := range x[i] {
					worst = math.Max(worst, math.Abs(got[i][j]-x[i][j]))
				}
			}
			t.Logf("max deviation %.4f", worst)
			if worst > c.tol {
				t.Errorf("max |received - X| = %.4f, want <= %.3f\nX   = %.3f\ngot = %.3f", worst, c.tol, x, got)
			}
		})
	}
}

// TestMechanismSkipsUnrunnable checks that a job never runs where its
// throughput is zero, even if the (agnostic) allocation puts it there, and
// that idle GPUs go to jobs without allocation.
func TestMechanismSkipsUnrunnable(t *testing.T) {
	m, _ := NewMechanism(ClusterSpec{WorkerTypes: []string{"k80", "v100"}, NumWorkers: []int{1, 1}}, 360)
	combos := []Combination{
		{JobIDs: []int{0}, ScaleFactor: 1, X: []float64{1, 0}, Runnable: []bool{false, true}},
		{JobIDs: []int{1}, ScaleFactor: 1, X: []float64{0, 0}, Runnable: []bool{true, true}},
	}
	got := runRounds(t, m, combos, 10)
	if got[0][0] != 0 || got[0][1] != 1 || got[1][0] != 1 {
		t.Fatalf("received %v, want job 0 filling v100 and job 1 on k80", got)
	}
}

// TestMechanismPacksServers checks multi-GPU jobs get GPUs of one server
// when the round's jobs fit that way, and that leases are renewed.
func TestMechanismPacksServers(t *testing.T) {
	m, _ := NewMechanism(ClusterSpec{WorkerTypes: []string{"v100"}, NumWorkers: []int{16}, GPUsPerServer: []int{4}}, 360)
	sfs := []int{1, 2, 1, 4, 2, 1, 1, 4}
	combos := make([]Combination, len(sfs))
	for i, sf := range sfs {
		combos[i] = Combination{JobIDs: []int{i}, ScaleFactor: sf, X: []float64{1}, Runnable: []bool{true}}
	}
	for round := range 5 {
		ps, err := m.Schedule(combos)
		if err != nil {
			t.Fatal(err)
		}
		checkPlacements(t, m.cluster, combos, ps)
		if len(ps) != len(combos) {
			t.Fatalf("round %d: %d placements, want %d", round, len(ps), len(combos))
		}
		for _, p := range ps {
			if servers := m.serversUsed(0, p.Workers); servers != 1 || !p.Consolidated {
				t.Errorf("round %d: job %d (sf %d) spans %d servers: %v", round, p.Combination, sfs[p.Combination], servers, p.Workers)
			}
			if p.LeaseRenewed != (round > 0) {
				t.Errorf("round %d: job %d lease renewed = %v", round, p.Combination, p.LeaseRenewed)
			}
			m.Record(combos[p.Combination], p, 360)
		}
	}
	// An 8-GPU job needs two whole servers.
	big := []Combination{{JobIDs: []int{9}, ScaleFactor: 8, X: []float64{1}, Runnable: []bool{true}}}
	ps, _ := m.Schedule(big)
	if len(ps) != 1 || !ps[0].Consolidated || m.serversUsed(0, ps[0].Workers) != 2 {
		t.Fatalf("8-GPU job placement %+v", ps)
	}
}

func TestMechanismErrors(t *testing.T) {
	if _, err := NewMechanism(ClusterSpec{WorkerTypes: []string{"v100"}, NumWorkers: []int{0}}, 360); err == nil {
		t.Error("zero workers: want error")
	}
	if _, err := NewMechanism(ClusterSpec{WorkerTypes: []string{"v100"}, NumWorkers: []int{1}}, math.NaN()); err == nil {
		t.Error("NaN round: want error")
	}
	m, _ := NewMechanism(ClusterSpec{WorkerTypes: []string{"v100"}, NumWorkers: []int{1}}, 360)
	bad := [][]Combination{
		{{JobIDs: []int{}, ScaleFactor: 1, X: []float64{1}, Runnable: []bool{true}}},
		{{JobIDs: []int{1, 1}, ScaleFactor: 1, X: []float64{1}, Runnable: []bool{true}}},
		{{JobIDs: []int{1}, ScaleFactor: 0, X: []float64{1}, Runnable: []bool{true}}},
		{{JobIDs: []int{1}, ScaleFactor: 1, X: []float64{math.NaN()}, Runnable: []bool{true}}},
		{{JobIDs: []int{1}, ScaleFactor: 1, X: []float64{1, 0}, Runnable: []bool{true}}},
		{{JobIDs: []int{1}, ScaleFactor: 1, X: []float64{1}, Runnable: []bool{true}}, {JobIDs: []int{1}, ScaleFactor: 1, X: []float64{1}, Runnable: []bool{true}}},
	}
	for i, combos := range bad {
		if _, err := m.Schedule(combos); err == nil {
			t.Errorf("case %d: want error", i)
		}
	}
}

func TestParseClusterSpec(t *testing.T) {
	spec, err := ParseClusterSpec("36:36:36", []string{"k80", "p100", "v100"})
	if err != nil || spec.TotalWorkers() != 108 {
		t.Fatalf("spec %+v, err %v", spec, err)
	}
	if spec, err := ParseClusterSpec("0:8:8", []string{"k80", "p100", "v100"}); err != nil || spec.TotalWorkers() != 16 {
		t.Errorf("a cluster without K80s: spec %+v, err %v", spec, err)
	}
	for _, s := range []string{"36:36", "36:x:36", "0:0:0", "36:-1:36", "36:2000000:36"} {
		if _, err := ParseClusterSpec(s, []string{"k80", "p100", "v100"}); err == nil {
			t.Errorf("ParseClusterSpec(%q): want error", s)
		}
	}
}

// FuzzParseClusterSpec checks ClusterSpec.Validate's rule on whatever
// ParseClusterSpec accepts: every count in [0, MaxWorkersPerType] (a type
// may have no GPUs, e.g. a cluster without K80s), at least one GPU in all,
// and the counts are the integers of the text in order.
func FuzzParseClusterSpec(f *testing.F) {
	f.Add("36:36:36")
	f.Add("1:0:-1")
	f.Add("::")
	f.Add("00:00:01") // once rejected by this test though the rule allows it (issue 11, item 6)
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseClusterSpec(s, []string{"k80", "p100", "v100"})
		if err != nil {
			return
		}
		parts := strings.Split(s, ":")
		total := 0
		for j, n := range spec.NumWorkers {
			if n < 0 || n > MaxWorkersPerType {
				t.Fatalf("accepted %q with %d workers of type %d", s, n, j)
			}
			if v, err := strconv.Atoi(strings.TrimSpace(parts[j])); err != nil || v != n {
				t.Fatalf("%q: type %d has %d workers, the text says %q", s, j, n, parts[j])
			}
			total += n
		}
		if total < 1 {
			t.Fatalf("accepted %q: a cluster without GPUs", s)
		}
	})
}

// TestMechanismPlacementSensitive: 12 GPUs in servers of 4. Job 0 (3 GPUs)
// is allocated consolidated time, job 1 (2 GPUs) only unconsolidated time,
// job 2 (4 GPUs) consolidated time. Job 1 is placed last, into the gaps:
// the free GPU left on job 0's server and one more, so job 2 still gets a
// whole server; its run time counts towards its unconsolidated share.
func TestMechanismPlacementSensitive(t *testing.T) {
	m, _ := NewMechanism(ClusterSpec{WorkerTypes: []string{"v100"}, NumWorkers: []int{12}, GPUsPerServer: []int{4}}, 360)
	combos := []Combination{
		{JobIDs: []int{0}, ScaleFactor: 3, X: []float64{1}, UnconsolidatedX: []float64{0}, Runnable: []bool{true}},
		{JobIDs: []int{1}, ScaleFactor: 2, X: []float64{0}, UnconsolidatedX: []float64{1}, Runnable: []bool{true}},
		{JobIDs: []int{2}, ScaleFactor: 4, X: []float64{1}, Runnable: []bool{true}},
	}
	ps, err := m.Schedule(combos)
	if err != nil {
		t.Fatal(err)
	}
	checkPlacements(t, m.cluster, combos, ps)
	byCombo := map[int]Placement{}
	for _, p := range ps {
		byCombo[p.Combination] = p
	}
	if len(byCombo) != 3 {
		t.Fatalf("placements %+v, want all three jobs", ps)
	}
	for c, want := range map[int]bool{0: true, 1: false, 2: true} {
		if byCombo[c].Consolidated != want {
			t.Errorf("job %d on %v: consolidated %v, want %v", c, byCombo[c].Workers, byCombo[c].Consolidated, want)
		}
	}
	if s0, s1 := m.serversUsed(0, byCombo[0].Workers), m.serversUsed(0, byCombo[1].Workers); s0 != 1 || s1 != 2 {
		t.Fatalf("job 0 on %v (%d servers), job 1 on %v (%d servers), want 1 and 2", byCombo[0].Workers, s0, byCombo[1].Workers, s1)
	}
	m.Record(combos[1], byCombo[1], 100)
	if r := m.received[keyOf(combos[1])]; r[1] != 180+100 || r[0] != 180 {
		t.Fatalf("job 1 received %v, want its 100 s in the unconsolidated column", r)
	}
	m.Record(combos[2], byCombo[2], 100)
	if r := m.received[keyOf(combos[2])]; r[0] != 180+100 {
		t.Fatalf("job 2 received %v, want its 100 s in the consolidated column", r)
	}
	bad := []Combination{{JobIDs: []int{0}, ScaleFactor: 1, X: []float64{1}, UnconsolidatedX: []float64{-1}, Runnable: []bool{true}}}
	if _, err := m.Schedule(bad); err == nil || !strings.Contains(err.Error(), "unconsolidated_x[0]") {
		t.Fatalf("negative unconsolidated share: error %v", err)
	}
}
