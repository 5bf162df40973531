package partition

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/hw"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
	"pipeplan/modelprofiles"
)

// testSystem is 2 servers of 4 GPUs of 16 GB.
var testSystem = System{GPU: hw.GPU{ID: "nvidia-v100-sxm2-16gb"}, MemoryBytes: 16e9,
	Levels: []hw.Level{{Workers: 4, BandwidthBytesPerSec: 16e9}, {Workers: 2, BandwidthBytesPerSec: 1.25e9}}}

// TestRegistryCoversPlanNames checks that the registry holds a planner under
// every name a plan may carry but "manual", and nothing else.
func TestRegistryCoversPlanNames(t *testing.T) {
	var names []string
	for _, p := range Planners() {
		names = append(names, p.Name())
		if got, err := Lookup(p.Name()); err != nil || got != p {
			t.Errorf("Lookup(%q) = %v, %v", p.Name(), got, err)
		}
	}
	want := slices.DeleteFunc(slices.Clone(plan.Planners), func(n string) bool { return n == plan.PlannerManual })
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("registered planners %v, want plan.Planners but manual: %v", names, want)
	}
	if _, err := Lookup("gpipe"); err == nil || !strings.Contains(err.Error(), `planner: must be one of [2bw madpipe pipedream ptdp], got "gpipe"`) {
		t.Errorf("Lookup(gpipe) = %v", err)
	}
}

// plannerProblems is a small problem for every planner.
func plannerProblems(t *testing.T) map[string]Problem {
	prof := randomChain(rand.New(rand.NewPCG(3, 5)), 8)
	prof.MicrobatchSize = 2
	sys := testSystem
	sys.MemoryBytes = 1e15
	a100 := dgxA100(t, 16)
	tr := gpt(8, 1024, 16)
	return map[string]Problem{
		plan.PlannerPipeDream: {Profile: &prof, System: sys},
		plan.PlannerTwoBW:     {Profile: &prof, System: sys, Fixed: plan.Execution{GlobalBatch: 64}},
		plan.PlannerMadPipe:   {Profile: &prof, System: sys},
		plan.PlannerPTDP:      {Transformer: &tr, System: SystemOf(a100), Fixed: plan.Execution{GlobalBatch: 64}},
	}
}

// TestPlannersProgressAndCancel checks the one progress convention on every
// planner — done never decreases, never exceeds a constant total, and
// reaches it on success — and that a cancelled context returns its error.
func TestPlannersProgressAndCancel(t *testing.T) {
	problems := plannerProblems(t)
	for _, pl := range Planners() {
		p := problems[pl.Name()]
		var done []int
		total := 0
		cands, err := pl.Plan(context.Background(), p, func(d, n int) {
			if total == 0 {
				total = n
			}
			if n != total || d < 0 || d > n || (len(done) > 0 && d < done[len(done)-1]) {
				t.Errorf("%s: progress %d of %d after %v of %d", pl.Name(), d, n, done, total)
			}
			done = append(done, d)
		})
		if err != nil {
			t.Fatalf("%s: %v", pl.Name(), err)
		}
		if len(cands) == 0 || len(done) == 0 || done[len(done)-1] != total {
			t.Errorf("%s: %d candidates, progress %v of %d: want done = total at the end", pl.Name(), len(cands), done, total)
		}
		for i, c := range cands {
			if c.Planner != pl.Name() {
				t.Errorf("%s: candidate %d names planner %q", pl.Name(), i, c.Planner)
			}
			if !slices.Contains(schedule.Kinds, c.Execution.Schedule) {
				t.Errorf("%s: candidate %d has schedule %q, not a core/schedule kind", pl.Name(), i, c.Execution.Schedule)
			}
			if i > 0 && c.Fits == cands[i-1].Fits && c.Fits && c.Predictions.SamplesPerSecond > cands[i-1].Predictions.SamplesPerSecond {
				t.Errorf("%s: candidate %d (%v samples/s) ranks below a slower one", pl.Name(), i, c.Predictions.SamplesPerSecond)
			}
			if i > 0 && c.Fits && !cands[i-1].Fits {
				t.Errorf("%s: fitting candidate %d ranks below one that does not fit", pl.Name(), i)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := pl.Plan(ctx, p, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: cancelled: err = %v, want context.Canceled", pl.Name(), err)
		}
	}
}

// TestPlannersNeedTheirModel checks that each planner says which model it needs.
func TestPlannersNeedTheirModel(t *testing.T) {
	for _, pl := range Planners() {
		_, err := pl.Plan(context.Background(), Problem{System: testSystem}, nil)
		if err == nil || !strings.HasPrefix(err.Error(), pl.Name()+": ") {
			t.Errorf("%s without a model: err = %v", pl.Name(), err)
		}
	}
}

// TestRunPlansOfRandomChainsValidate checks that every PipeDream partition
// and every 2BW configuration of random chains exports as a valid plan whose
// stages, schedule and predictions are the planner's.
func TestRunPlansOfRandomChainsValidate(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	pipedream, _ := Lookup(plan.PlannerPipeDream)
	twoBW, _ := Lookup(plan.PlannerTwoBW)
	sys := testSystem
	sys.MemoryBytes = 0 // unlimited
	for trial := 0; trial < 20; trial++ {
		prof := randomChain(rng, 3+rng.IntN(6))
		prof.MicrobatchSize = 1 + rng.IntN(4)
		cuts, err := ChainCuts(prof)
		if err != nil {
			t.Fatal(err)
		}
		pd, err := PipeDream(context.Background(), cuts, PipeDreamOptions{Levels: sys.Levels}, nil)
		if err != nil {
			t.Fatal(err)
		}
		cands, err := pipedream.Plan(context.Background(), Problem{Profile: &prof, System: sys}, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := cands[0].RunPlan()
		if err != nil {
			t.Fatalf("trial %d: pipedream plan: %v", trial, err)
		}
		gpus := 0
		for q, s := range p.Stages {
			if s.Replicas != pd.Stages[q].Replicas || s.FirstLayer != pd.Stages[q].FirstLayer {
				t.Errorf("trial %d: stage %d is %+v, partition has %+v", trial, q, s, pd.Stages[q])
			}
			gpus += s.Replicas
		}
		if gpus != pd.GPUs || p.Predictions.BottleneckSeconds != pd.BottleneckSeconds {
			t.Errorf("trial %d: plan uses %d GPUs at %v s, partition %d at %v s",
				trial, gpus, p.Predictions.BottleneckSeconds, pd.GPUs, pd.BottleneckSeconds)
		}
		if p.Planner != "pipedream" || p.Execution.Schedule != schedule.PipeDream || p.Cluster.Nodes != 2 || p.Cluster.GPUsPerNode != 4 || p.Cluster.GPU != sys.GPU.ID {
			t.Errorf("trial %d: plan %s %s on %+v", trial, p.Planner, p.Execution.Schedule, p.Cluster)
		}

		batch := 8 * prof.MicrobatchSize * sys.GPUs()
		cands, err = twoBW.Plan(context.Background(), Problem{Profile: &prof, System: sys, Fixed: plan.Execution{GlobalBatch: batch}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(cands) == 0 {
			t.Fatalf("trial %d: 2BW found no configuration without a memory limit", trial)
		}
		// §3.3.3's executions as a plan names them, written out independently.
		want := map[TwoBWExecution][2]string{
			TwoBWNoPipelining:       {"1f1b", "none"},
			TwoBWPipelined:          {"2bw", "none"},
			TwoBWPipelinedRecompute: {"2bw", "full"},
		}
		for _, c := range cands {
			p, err := c.RunPlan()
			if err != nil {
				t.Fatalf("trial %d: 2bw plan of %+v: %v", trial, c, err)
			}
			w := want[c.TwoBW.Execution]
			e := p.Execution
			if e.PP*e.DP != 8 || string(e.Schedule) != w[0] || string(e.Recompute) != w[1] || e.GlobalBatch != batch {
				t.Errorf("trial %d: plan %+v does not carry configuration %+v", trial, e, c)
			}
			if len(p.Predictions.StagePeakBytes) != len(p.Stages) || slices.Max(p.Predictions.StagePeakBytes) != p.Predictions.PeakBytesPerGPU {
				t.Errorf("trial %d: stage peaks %v, peak %v", trial, p.Predictions.StagePeakBytes, p.Predictions.PeakBytesPerGPU)
			}
		}
	}
}

// TestRunPlanRefusals checks that RunPlan names why a candidate has no plan:
// MadPipe's shared special GPU, or a candidate the plan schema rejects.
func TestRunPlanRefusals(t *testing.T) {
	prof := randomChain(rand.New(rand.NewPCG(1, 2)), 6)
	prof.MicrobatchSize = 2
	madpipe, _ := Lookup(plan.PlannerMadPipe)
	cands, err := madpipe.Plan(context.Background(), Problem{Profile: &prof, System: System{MemoryBytes: 1e15, Levels: testSystem.Levels}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cands[0].RunPlan(); err == nil || !strings.Contains(err.Error(), "madpipe plan: MadPipe puts several stages on its special GPU") {
		t.Errorf("MadPipe RunPlan: err = %v", err)
	}
	if got := cands[0].Execution.Schedule; got != schedule.OneFOneBStar {
		t.Errorf("MadPipe schedule %q, want %q", got, schedule.OneFOneBStar)
	}
	pipedream, _ := Lookup(plan.PlannerPipeDream)
	cands, err = pipedream.Plan(context.Background(), Problem{Profile: &prof, System: testSystem}, nil)
	if err != nil {
		t.Fatal(err)
	}
	broken := cands[0]
	broken.Stages = append(slices.Clone(broken.Stages), plan.Stage{FirstLayer: 0, LastLayer: 0, Replicas: 1})
	if _, err := broken.RunPlan(); err == nil || !strings.HasPrefix(err.Error(), "pipedream plan: stages") {
		t.Errorf("RunPlan of stages that do not tile the layers: err = %v", err)
	}
}

// TestPipeDreamPlannerOnGraph checks that a PipeDream graph's partition of
// states exports with one layer per stage holding the stage's time and
// weights.
func TestPipeDreamPlannerOnGraph(t *testing.T) {
	g, err := modelprofiles.Graph("resnet18")
	if err != nil {
		t.Fatal(err)
	}
	st, err := g.States()
	if err != nil {
		t.Fatal(err)
	}
	chain := g.Chain()
	pipedream, _ := Lookup(plan.PlannerPipeDream)
	cands, err := pipedream.Plan(context.Background(), Problem{Profile: &chain, States: st, System: testSystem}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := cands[0]
	p, err := c.RunPlan()
	if err != nil {
		t.Fatal(err)
	}
	if p.Model.NumLayers != len(c.PipeDream.Stages) {
		t.Fatalf("plan has %d layers for %d stages", p.Model.NumLayers, len(c.PipeDream.Stages))
	}
	for q, s := range c.PipeDream.Stages {
		l := p.Model.Profile.Layers[q]
		if got := l.FwdSeconds + l.BwdSeconds; got != s.ComputeSeconds || l.ParameterBytes != s.ParameterBytes {
			t.Errorf("layer %d: %v s and %v bytes, stage %v s and %v bytes", q, got, l.ParameterBytes, s.ComputeSeconds, s.ParameterBytes)
		}
		if p.Stages[q] != (plan.Stage{FirstLayer: q, LastLayer: q, Replicas: s.Replicas}) {
			t.Errorf("stage %d is %+v", q, p.Stages[q])
		}
	}
}
