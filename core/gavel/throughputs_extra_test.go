package gavel

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"
)

// testExtras are two made-up job types: a single-GPU one that cannot run on
// a K80, and a 2-GPU one with a slower spread placement on V100s.
var testExtras = []ExtraJobType{
	{Model: "planned: tiny", ScaleFactor: 1, Isolated: map[string]float64{"v100": 3, "p100": 2}},
	{Model: "planned: big", ScaleFactor: 2, Isolated: map[string]float64{"v100": 0.5, "p100": 0.25, "k80": 0.1},
		Unconsolidated: map[string]float64{"v100": 0.2}},
}

// TestWithJobTypesCopyOnWrite: the extended table answers for the extra
// types (0 where a worker type was left out, the spread value or the
// consolidated fallback) and agrees with the original on every other entry,
// while the shared default table stays without them.
func TestWithJobTypesCopyOnWrite(t *testing.T) {
	base := DefaultThroughputs()
	sizes := map[string]int{}
	for wt, iso := range base.isolated {
		sizes[wt] = len(iso)
	}
	ext, err := base.WithJobTypes(testExtras)
	if err != nil {
		t.Fatal(err)
	}
	tiny, big := JobKey{"planned: tiny", 1}, JobKey{"planned: big", 2}
	for _, c := range []struct {
		wt           string
		k            JobKey
		consolidated bool
		want         float64
	}{
		{"v100", tiny, true, 3}, {"k80", tiny, true, 0}, {"k80", tiny, false, 0},
		{"v100", big, true, 0.5}, {"v100", big, false, 0.2}, {"p100", big, false, 0.25}, {"k80", big, false, 0.1},
	} {
		if got, err := ext.Placed(c.wt, c.k, c.consolidated); err != nil || got != c.want {
			t.Errorf("Placed(%s, %s, %v) = %v, %v; want %v", c.wt, c.k, c.consolidated, got, err, c.want)
		}
		if _, err := base.Isolated(c.wt, c.k); err == nil {
			t.Errorf("the default table knows %s on %s after WithJobTypes", c.k, c.wt)
		}
	}
	for wt, iso := range base.isolated {
		if len(iso) != sizes[wt] {
			t.Errorf("default table %s: %d job keys, had %d", wt, len(iso), sizes[wt])
		}
		for k, v := range iso {
			if got, err := ext.Isolated(wt, k); err != nil || got != v {
				t.Fatalf("extended %s %s = %v, %v; original %v", wt, k, got, err, v)
			}
		}
		for p, v := range base.colocated[wt] {
			if got, err := ext.Colocated(wt, p[0], p[1]); err != nil || got != v {
				t.Fatalf("extended %s %s+%s = %v, %v; original %v", wt, p[0], p[1], got, err, v)
			}
		}
	}
	if !reflect.DeepEqual(ext.WorkerTypes(), base.WorkerTypes()) {
		t.Errorf("worker types %v, want %v", ext.WorkerTypes(), base.WorkerTypes())
	}
}

// TestWithJobTypesErrors: bad extra types are refused with the field and value.
func TestWithJobTypesErrors(t *testing.T) {
	iso := map[string]float64{"v100": 1}
	for _, c := range []struct {
		extra []ExtraJobType
		want  string
	}{
		{[]ExtraJobType{{Model: "ResNet-50 (batch size 64)", ScaleFactor: 1, Isolated: iso}}, `extra[0].model: "ResNet-50 (batch size 64)" clashes`},
		{[]ExtraJobType{{Model: "A3C", ScaleFactor: 8, Isolated: iso}}, `extra[0].model: "A3C" clashes`},
		{[]ExtraJobType{{ScaleFactor: 1, Isolated: iso}}, "extra[0].model: must not be empty"},
		{[]ExtraJobType{{Model: "x", ScaleFactor: 0, Isolated: iso}}, "extra[0].scale_factor: must be >= 1, got 0"},
		{[]ExtraJobType{{Model: "x", ScaleFactor: 1}, {Model: "x", ScaleFactor: 1}}, "extra[1]: duplicate job type ('x', 1)"},
		{[]ExtraJobType{{Model: "x", ScaleFactor: 1, Isolated: map[string]float64{"a100": 1}}}, `extra[0].isolated: unknown worker type "a100"`},
		{[]ExtraJobType{{Model: "x", ScaleFactor: 1, Isolated: map[string]float64{"v100_unconsolidated": 1}}}, `unknown worker type "v100_unconsolidated"`},
		{[]ExtraJobType{{Model: "x", ScaleFactor: 1, Isolated: map[string]float64{"v100": math.NaN()}}}, "extra[0].isolated[v100]: must be a finite number >= 0, got NaN"},
		{[]ExtraJobType{{Model: "x", ScaleFactor: 2, Unconsolidated: map[string]float64{"k80": -1}}}, "extra[0].unconsolidated[k80]: must be a finite number >= 0, got -1"},
		{[]ExtraJobType{{Model: "x", ScaleFactor: 2, Unconsolidated: map[string]float64{"v100_unconsolidated": 1}}}, `worker type "v100_unconsolidated" has no _unconsolidated variant`},
	} {
		if _, err := DefaultThroughputs().WithJobTypes(c.extra); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want %q", c.extra, err, c.want)
		}
	}
	// The same model at two scale factors is two job types, as in Gavel's table.
	two := []ExtraJobType{{Model: "x", ScaleFactor: 1, Isolated: iso}, {Model: "x", ScaleFactor: 2, Isolated: iso}}
	if _, err := DefaultThroughputs().WithJobTypes(two); err != nil {
		t.Errorf("one model at scale factors 1 and 2: %v", err)
	}
}

// TestWithJobTypesPairsSkipExtras: space sharing offers the Gavel jobs the
// same pairs as without the extra jobs, and none with an extra job, even
// of equal scale factor or of the same extra type.
func TestWithJobTypesPairsSkipExtras(t *testing.T) {
	ext, err := DefaultThroughputs().WithJobTypes(testExtras)
	if err != nil {
		t.Fatal(err)
	}
	job := func(id int, model string, sf int) Job {
		return Job{ID: id, JobType: model, ScaleFactor: sf, PriorityWeight: 1}
	}
	gavelJobs := []Job{job(0, "ResNet-18 (batch size 16)", 1), job(1, "A3C", 1), job(2, "LM (batch size 20)", 2), job(3, "ResNet-50 (batch size 64)", 2)}
	types := []string{"k80", "p100", "v100"}
	alone := &Instance{WorkerTypes: types, NumWorkers: []int{4, 4, 4}, Jobs: gavelJobs}
	if err := PairsFromTable(alone, DefaultThroughputs()); err != nil {
		t.Fatal(err)
	}
	if len(alone.Pairs) == 0 {
		t.Fatal("no Gavel pairs: the comparison below would be vacuous")
	}
	mixed := &Instance{WorkerTypes: types, NumWorkers: []int{4, 4, 4},
		Jobs: append(append([]Job(nil), gavelJobs...), job(4, "planned: tiny", 1), job(5, "planned: tiny", 1), job(6, "planned: big", 2))}
	if err := PairsFromTable(mixed, ext); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(mixed.Pairs, alone.Pairs) {
		t.Errorf("pairs with extra jobs %v, want the Gavel jobs' own %v", mixed.Pairs, alone.Pairs)
	}
}

// TestSimulateExtraJobTypes: a trace drawn from extra and Gavel job types
// runs under space sharing and placement sensitivity; no job finishes
// faster than alone on its best GPU, and a lone extra job finishes exactly
// when the round arithmetic at its given throughput says.
func TestSimulateExtraJobTypes(t *testing.T) {
	ext, err := DefaultThroughputs().WithJobTypes(testExtras)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := GenerateTrace(TraceConfig{NumJobs: 16, JobsPerHour: 8, Seed: 1, Throughputs: ext,
		JobTypes: []JobType{{Model: "planned: tiny"}, {Model: "A3C"}, {Model: "ResNet-18 (batch size 16)"}}})
	if err != nil {
		t.Fatal(err)
	}
	jobs = append(jobs, Job{ID: 16, JobType: "planned: big", ScaleFactor: 2, PriorityWeight: 1, NumSteps: 2000, ArrivalSeconds: 600})
	policy, err := PolicyByName("max_min_fairness_packed")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Simulate(context.Background(), SimConfig{Cluster: testCluster, Policy: policy, Jobs: jobs, Throughputs: ext,
		SpaceSharing: true, PlacementSensitive: true})
	if err != nil {
		t.Fatal(err)
	}
	checkNotFasterThanAlone(t, res, jobs, ext, testCluster.WorkerTypes)
	extras := 0
	for _, o := range res.Jobs {
		if strings.HasPrefix(o.JobType, "planned: ") {
			extras++
		}
	}
	if res.JobsCompleted != len(jobs) || extras < 2 {
		t.Fatalf("%d of %d jobs completed, %d of extra types", res.JobsCompleted, len(jobs), extras)
	}

	const steps = 5000.0
	lone := Job{ID: 0, JobType: "planned: big", ScaleFactor: 2, PriorityWeight: 1, NumSteps: steps}
	one, err := Simulate(context.Background(), SimConfig{Cluster: testCluster, Policy: fixedPolicy{[]float64{0, 0, 1}}, Jobs: []Job{lone}, Throughputs: ext})
	if err != nil {
		t.Fatal(err)
	}
	perRound := math.Floor(0.5 * 360)
	full := math.Floor(steps / perRound)
	if want := full*perRound/0.5 + (steps-full*perRound)/0.5; math.Abs(one.AvgJCTSeconds-want) > 1e-6*want {
		t.Errorf("lone extra job: JCT %v, want %v at 0.5 steps/s", one.AvgJCTSeconds, want)
	}
}

// BenchmarkWithJobTypes extends Gavel's table with 8 extra job types.
func BenchmarkWithJobTypes(b *testing.B) {
	extra := make([]ExtraJobType, 8)
	for i := range extra {
		extra[i] = ExtraJobType{Model: "planned " + string(rune('a'+i)), ScaleFactor: 1 << (i % 4), Isolated: map[string]float64{"v100": 1}}
	}
	for b.Loop() {
		if _, err := DefaultThroughputs().WithJobTypes(extra); err != nil {
			b.Fatal(err)
		}
	}
}
