package gavel

import (
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestGenerateTraceDeterministic(t *testing.T) {
	cfg := TraceConfig{NumJobs: 200, JobsPerHour: 5.6, Seed: 7, MultiGPU: true, SLOs: true, PriorityWeights: true}
	a, err := GenerateTrace(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := GenerateTrace(cfg)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave different traces")
	}
	cfg.Seed = 8
	c, _ := GenerateTrace(cfg)
	if reflect.DeepEqual(a, c) {
		t.Fatal("different seeds gave the same trace")
	}
}

// TestGenerateTraceDistribution checks the generator against §5.7.1 on a
// large sample: uniform job types, the 0.8/0.2 duration mix and its ranges,
// the Poisson rate, the multi-GPU mix and num_steps = duration × T[v100].
func TestGenerateTraceDistribution(t *testing.T) {
	const n = 40000
	const rate = 4.0
	jobs, err := GenerateTrace(TraceConfig{NumJobs: n, JobsPerHour: rate, Seed: 1, MultiGPU: true, PriorityWeights: true})
	if err != nil {
		t.Fatal(err)
	}
	tt := DefaultThroughputs()
	distributed := map[string]bool{}
	for _, jt := range DefaultJobTable() {
		distributed[jt.Model] = jt.Distributed
	}
	long, heavy := 0, 0
	sfCount := map[int]int{}
	typeCount := map[string]int{}
	for i, j := range jobs {
		if j.ID != i {
			t.Fatalf("job %d has ID %d", i, j.ID)
		}
		d := j.DurationSeconds
		if d < 60*math.Pow(10, 1.5) || d > 60*1e4 {
			t.Fatalf("duration %v out of range", d)
		}
		if d > 60*1e3 {
			long++
		}
		if j.ScaleFactor > 1 && !distributed[j.JobType] {
			t.Fatalf("%s got scale factor %d", j.JobType, j.ScaleFactor)
		}
		sfCount[j.ScaleFactor]++
		if j.ScaleFactor == 1 {
			typeCount[j.JobType]++
		}
		if j.PriorityWeight == 5 {
			heavy++
		}
		tput, err := tt.Isolated("v100", JobKey{j.JobType, j.ScaleFactor})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(j.NumSteps-math.Max(1, math.Round(d*tput))) > 0 {
			t.Fatalf("num_steps %v, want round(%v × %v)", j.NumSteps, d, tput)
		}
	}
	near := func(what string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %.4f, want %.4f ± %.4f", what, got, want, tol)
		}
	}
	near("long-job fraction", float64(long)/n, 0.2, 0.01)
	near("weight-5 fraction", float64(heavy)/n, 0.2, 0.01)
	near("sf1 fraction", float64(sfCount[1])/n, 0.7, 0.01)
	near("sf2 fraction", float64(sfCount[2])/n, 0.1, 0.01)
	near("sf4 fraction", float64(sfCount[4])/n, 0.15, 0.01)
	near("sf8 fraction", float64(sfCount[8])/n, 0.05, 0.01)
	if len(typeCount) != 26 {
		t.Errorf("single-GPU jobs cover %d types, want 26", len(typeCount))
	}
	for m, c := range typeCount {
		near("share of "+m, float64(c)/float64(sfCount[1]), 1.0/26, 0.006)
	}
	meanGap := jobs[n-1].ArrivalSeconds / (n - 1)
	near("mean inter-arrival (s)", meanGap, 3600/rate, 0.02*3600/rate)
}

func TestGenerateTraceStaticAndErrors(t *testing.T) {
	jobs, err := GenerateTrace(TraceConfig{NumJobs: 50, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.ArrivalSeconds != 0 || j.ScaleFactor != 1 || j.SLOSeconds != 0 || j.PriorityWeight != 1 {
			t.Fatalf("static single-GPU job %+v", j)
		}
	}
	bad := []TraceConfig{
		{NumJobs: 1, DurationChoicesSeconds: []float64{3600, 0}},
		{NumJobs: -1},
		{NumJobs: 1, JobsPerHour: math.NaN()},
		{NumJobs: 1, JobsPerHour: -2},
		{NumJobs: 1, ReferenceWorkerType: "tpu"},
		{NumJobs: 1, MultiGPU: true, JobTypes: []JobType{{Model: "A3C"}}},
	}
	for _, cfg := range bad {
		if _, err := GenerateTrace(cfg); err == nil {
			t.Errorf("GenerateTrace(%+v): want error", cfg)
		}
	}
}

func TestParseTraceFiles(t *testing.T) {
	tt := DefaultThroughputs()
	cases := []struct {
		file      string
		n         int
		sfs       map[int]int
		allAtZero bool
		legacy    bool
	}{
		{"small_test.trace", 20, nil, false, false},
		{"max_min_fairness.trace", 96, map[int]int{1: 59, 2: 19, 4: 18}, false, false},
		{"minimize_makespan.trace", 100, map[int]int{1: 71, 2: 6, 4: 23}, true, false},
		{"795a4c.trace", 3, nil, false, true},
		{"925e2b.trace", 4, nil, false, true},
		{"23dbec.trace", 9, nil, false, true},
	}
	for _, c := range cases {
		data, err := os.ReadFile("testdata/traces/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		jobs, err := ParseTrace(data)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if len(jobs) != c.n {
			t.Errorf("%s: %d jobs, want %d", c.file, len(jobs), c.n)
		}
		sfs := map[int]int{}
		for _, j := range jobs {
			sfs[j.ScaleFactor]++
			if c.allAtZero && j.ArrivalSeconds != 0 {
				t.Errorf("%s: job %d arrives at %v, want 0", c.file, j.ID, j.ArrivalSeconds)
			}
			// Legacy MSR traces hold scale factors the throughput data lacks
			// (e.g. CycleGAN × 8); only the current-format files must match it.
			if _, err := tt.Isolated("v100", JobKey{j.JobType, j.ScaleFactor}); err != nil && !c.legacy {
				t.Errorf("%s: %v", c.file, err)
			}
		}
		if c.sfs != nil && !reflect.DeepEqual(sfs, c.sfs) {
			t.Errorf("%s: scale factors %v, want %v", c.file, sfs, c.sfs)
		}
	}
}

func TestParseTraceLines(t *testing.T) {
	cur := "LM (batch size 5)\tcmd %s\tdir\t--steps\t1\t1000\t2\t5\t3600.5\t12.5\n"
	legacy := "A3C\tcmd\t-n\t0\t300\t7.0\t1\nA3C\tcmd\t-n\t0\t300\t9.0\t0\n"
	jobs, err := ParseTrace([]byte(cur + "\n" + legacy))
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{ID: 0, JobType: "LM (batch size 5)", ScaleFactor: 2, PriorityWeight: 5, NumSteps: 1000, SLOSeconds: 3600.5, ArrivalSeconds: 12.5},
		{ID: 1, JobType: "A3C", ScaleFactor: 1, PriorityWeight: 1, NumSteps: 300, ArrivalSeconds: 7},
	}
	if !reflect.DeepEqual(jobs, want) {
		t.Fatalf("got %+v\nwant %+v", jobs, want)
	}
	bad := map[string]string{
		"a\tb\tc":                        "fields",
		"\tc\td\te\t1\t10\t1\t1\t-1\t0":  "job_type",
		"A\tc\td\te\t1\t0\t1\t1\t-1\t0":  "total_steps",
		"A\tc\td\te\t1\t5\t0\t1\t-1\t0":  "scale_factor",
		"A\tc\td\te\t1\t5\t1\t0\t-1\t0":  "priority_weight",
		"A\tc\td\te\t1\t5\t1\t1\tNaN\t0": "SLO",
		"A\tc\td\te\t1\t5\t1\t1\t-1\t-3": "arrival_time",
		"A\tc\t-n\t0\t300\tInf\t1":       "arrival_time",
		"A\tc\t-n\t0\t300\t1\t-1":        "scale_factor",
	}
	for in, want := range bad {
		_, err := ParseTrace([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("ParseTrace(%q): err = %v, want line 1 and %q", in, err, want)
		}
	}
}

func FuzzParseTrace(f *testing.F) {
	for _, name := range []string{"small_test.trace", "795a4c.trace"} {
		data, err := os.ReadFile("testdata/traces/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("A\tc\t-n\t0\t300\t9.0\t0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		jobs, err := ParseTrace(data)
		if err != nil {
			return
		}
		for i, j := range jobs {
			if j.ID != i || j.JobType == "" || j.ScaleFactor < 1 || !(j.NumSteps >= 1) || !(j.PriorityWeight > 0) ||
				!(j.ArrivalSeconds >= 0) || math.IsInf(j.ArrivalSeconds, 0) || !(j.SLOSeconds >= 0) || math.IsInf(j.SLOSeconds, 0) {
				t.Fatalf("accepted bad job %+v", j)
			}
		}
	})
}

// TestGenerateTraceChoices checks the cost workload of §5.7.3: two job types
// and durations drawn from a fixed set, both uniformly.
func TestGenerateTraceChoices(t *testing.T) {
	var types []JobType
	for _, jt := range DefaultJobTable() {
		if jt.Model == "A3C" || jt.Model == "ResNet-50 (batch size 64)" {
			types = append(types, jt)
		}
	}
	days := []float64{0.5, 1, 2, 4, 8}
	choices := make([]float64, len(days))
	for i, d := range days {
		choices[i] = d * 86400
	}
	const n = 5000
	jobs, err := GenerateTrace(TraceConfig{NumJobs: n, Seed: 4, JobTypes: types, DurationChoicesSeconds: choices})
	if err != nil {
		t.Fatal(err)
	}
	byDuration := map[float64]int{}
	byType := map[string]int{}
	for _, j := range jobs {
		byDuration[j.DurationSeconds]++
		byType[j.JobType]++
	}
	if len(byDuration) != 5 || len(byType) != 2 {
		t.Fatalf("durations %v, types %v", byDuration, byType)
	}
	for d, c := range byDuration {
		if math.Abs(float64(c)/n-0.2) > 0.02 {
			t.Errorf("duration %v s drawn %d times of %d", d, c, n)
		}
	}
	if a := float64(byType["A3C"]) / n; math.Abs(a-0.5) > 0.02 {
		t.Errorf("A3C share %.3f, want 0.5", a)
	}
}

// TestGenerateTraceTemplates: every job copies a template's kind and
// weight; steps are the duration at the reference GPU's throughput, or at
// the fastest GPU's where the job cannot run on the reference (ResNet-50
// with batch size 128 on two K80s).
func TestGenerateTraceTemplates(t *testing.T) {
	templates := []Job{
		{JobType: "LM (batch size 20)", ScaleFactor: 4, PriorityWeight: 3},
		{JobType: "ResNet-50 (batch size 128)", ScaleFactor: 2},
	}
	tt := DefaultThroughputs()
	jobs, err := GenerateTrace(TraceConfig{NumJobs: 50, JobsPerHour: 2, Seed: 4, Templates: templates, ReferenceWorkerType: "k80"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, j := range jobs {
		k := JobKey{j.JobType, j.ScaleFactor}
		seen[k.Model] = true
		var wantWeight, tput float64
		switch k {
		case JobKey{templates[0].JobType, 4}:
			wantWeight = 3
			tput, _ = tt.Isolated("k80", k)
		case JobKey{templates[1].JobType, 2}:
			wantWeight = 1
			if v, _ := tt.Isolated("k80", k); v != 0 {
				t.Fatalf("the test needs %s not to run on a K80, got %v", k, v)
			}
			for _, wt := range []string{"p100", "v100"} {
				v, _ := tt.Isolated(wt, k)
				tput = math.Max(tput, v)
			}
		default:
			t.Fatalf("job %d is %s, not a template", j.ID, k)
		}
		if j.PriorityWeight != wantWeight || j.NumSteps != math.Max(1, math.Round(j.DurationSeconds*tput)) {
			t.Fatalf("job %d (%s): weight %v steps %v, want %v and %v", j.ID, k, j.PriorityWeight, j.NumSteps, wantWeight, math.Round(j.DurationSeconds*tput))
		}
	}
	if len(seen) != 2 {
		t.Fatalf("drew %v, want both templates", seen)
	}
	_, err = GenerateTrace(TraceConfig{NumJobs: 1, Templates: []Job{{JobType: "A3C"}}})
	if err == nil || !strings.Contains(err.Error(), "templates[0].scale_factor") {
		t.Fatalf("template without scale factor: err = %v", err)
	}
}
