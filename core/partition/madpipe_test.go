package partition

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/schedule"
	"pipeplan/modelprofiles"
)

// madCheckResult checks everything a MadPipe result promises: the stages
// tile the chain, at most workers processors and one special one, the
// pattern is valid at the reported period, and its recomputed peak memory
// fits the limit.
func madCheckResult(t *testing.T, prof model.Profile, workers int, bandwidth, memory float64, r *MadPipeResult) {
	t.Helper()
	c, err := newMadChain(prof, bandwidth)
	if err != nil {
		t.Fatal(err)
	}
	var stages []madStage
	for i, s := range r.Stages {
		if (i == 0 && s.FirstLayer != 0) || (i > 0 && s.FirstLayer != r.Stages[i-1].LastLayer+1) || s.LastLayer < s.FirstLayer {
			t.Fatalf("stages %+v do not tile the chain", r.Stages)
		}
		stages = append(stages, madStage{first: s.FirstLayer, last: s.LastLayer, special: s.Special})
	}
	if r.Stages[len(r.Stages)-1].LastLayer != len(prof.Layers)-1 {
		t.Fatalf("stages %+v miss the last layers", r.Stages)
	}
	pl := madPlace(stages)
	if pl.processors > workers || len(r.Processors) != pl.processors {
		t.Fatalf("%d processors for %d workers", pl.processors, workers)
	}
	for i, s := range r.Stages {
		if s.Processor != pl.processor[i] {
			t.Fatalf("stage %d on processor %d, want %d", i, s.Processor, pl.processor[i])
		}
		if proc := r.Processors[s.Processor].MemoryBytes; !s.Special && math.Abs(s.MemoryBytes-proc) > 1e-9*proc {
			t.Fatalf("stage %d alone on its processor: memory %g, processor %g", i, s.MemoryBytes, proc)
		}
	}
	pat := &madPattern{period: r.PeriodSeconds, ops: r.Pattern}
	for _, op := range r.Pattern {
		pat.sigma = append(pat.sigma, float64(op.Shift)*r.PeriodSeconds+op.StartSeconds)
	}
	if err := madCheckPattern(pat); err != nil {
		t.Fatalf("invalid pattern: %v", err)
	}
	mem, _ := madMemory(c, pl, pat)
	for q, m := range mem {
		if m > memory || math.Abs(m-r.Processors[q].MemoryBytes) > 1e-9*m {
			t.Fatalf("processor %d: memory %g (reported %g) over the limit %g", q, m, r.Processors[q].MemoryBytes, memory)
		}
		if r.Processors[q].ComputeSeconds > r.PeriodSeconds*(1+1e-9) {
			t.Fatalf("processor %d is busy %g s in a period of %g s", q, r.Processors[q].ComputeSeconds, r.PeriodSeconds)
		}
	}
	if r.PeriodSeconds < r.AllocationPeriodSeconds*(1-1e-9) || r.PeriodSeconds < c.totalCompute()/float64(workers)*(1-1e-9) {
		t.Fatalf("period %g below the allocation's load %g or U/P", r.PeriodSeconds, r.AllocationPeriodSeconds)
	}
}

func TestMadPipeRandomChainsAreValid(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	solved := 0
	for trial := 0; trial < 60; trial++ {
		L := 1 + rng.IntN(20)
		workers := 1 + rng.IntN(6)
		prof := madRandomChain(rng, L)
		bw := 1e9 + 2e10*rng.Float64()
		memory := 3e8 + 3e9*rng.Float64()
		r, err := MadPipe(context.Background(), prof, workers, bw, memory, nil)
		if err != nil {
			if !strings.Contains(err.Error(), "memory_bytes") {
				t.Fatalf("trial %d: %v", trial, err)
			}
			continue
		}
		solved++
		madCheckResult(t, prof, workers, bw, memory, r)
	}
	if solved < 30 {
		t.Fatalf("only %d of 60 random instances solved", solved)
	}
}

// madPipeDreamStar is the paper's baseline (madpipe-2020 §5.1): PipeDream's
// straight partition of the chain, scheduled by 1F1B* at the smallest
// period that fits in memory; +Inf if it does not fit at any period.
func madPipeDreamStar(t *testing.T, prof model.Profile, workers int, bw, memory float64) (float64, *OneFOneBStar, []int) {
	t.Helper()
	cuts, err := ChainCuts(prof)
	if err != nil {
		t.Fatal(err)
	}
	pd, err := PipeDream(context.Background(), cuts, PipeDreamOptions{Levels: []hw.Level{{Workers: workers, BandwidthBytesPerSec: bw}}, Straight: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var firsts []int
	for _, s := range pd.Stages {
		firsts = append(firsts, s.FirstLayer)
	}
	star, err := OneFOneBStarMinPeriod(prof, firsts, bw, memory)
	if err != nil {
		return math.Inf(1), nil, firsts
	}
	return star.PeriodSeconds, star, firsts
}

// TestMadPipeBeatsPipeDreamUnderMemoryLimits compares MadPipe with PipeDream
// + 1F1B* on PipeDream's profiles at 12 GB/s: the paper finds PipeDream's
// period routinely 20% longer when memory is tight (Figure 7). The
// geometric mean of the ratios must be at least 1.2 over these cases (the
// memory-light AlexNet and GNMT tie), MadPipe must never be worse, its
// schedules must be valid, and PipeDream's 1F1B* must pass the schedule
// simulator's memory check.
func TestMadPipeBeatsPipeDreamUnderMemoryLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("runs MadPipe on real profiles")
	}
	const bw = 12e9
	cases := []struct {
		model   string
		workers int
		memory  float64
	}{
		{"resnet50", 4, 32e9}, {"resnet50", 8, 12e9}, {"resnet50", 8, 16e9},
		{"vgg16", 4, 8e9}, {"vgg16", 4, 12e9}, {"vgg16", 4, 32e9}, {"vgg16", 8, 8e9}, {"vgg16", 8, 12e9},
		{"alexnet", 4, 8e9}, {"gnmt", 4, 8e9},
	}
	logRatio, n := 0.0, 0
	for _, tc := range cases {
		g, err := modelprofiles.Graph(tc.model)
		if err != nil {
			t.Fatal(err)
		}
		prof := g.Chain()
		r, err := MadPipe(context.Background(), prof, tc.workers, bw, tc.memory, nil)
		if err != nil {
			t.Fatalf("%s P=%d M=%g: %v", tc.model, tc.workers, tc.memory, err)
		}
		madCheckResult(t, prof, tc.workers, bw, tc.memory, r)
		pd, star, firsts := madPipeDreamStar(t, prof, tc.workers, bw, tc.memory)
		t.Logf("%-9s P=%d M=%2.0f GB: PipeDream+1F1B* %.4f s, MadPipe %.4f s (ratio %.2f)", tc.model, tc.workers, tc.memory/1e9, pd, r.PeriodSeconds, pd/r.PeriodSeconds)
		if math.IsInf(pd, 1) {
			n++
			logRatio += math.Log(2) // count an infeasible baseline as twice as slow
			continue
		}
		n++
		logRatio += math.Log(pd / r.PeriodSeconds)
		madCheckStarWithSimulator(t, prof, firsts, bw, tc.memory, star)
		// MadPipe's contiguous pass covers PipeDream's partition, up to
		// the search's 0.1% and the schedule grid's 0.2%.
		if r.PeriodSeconds > pd*1.01 {
			t.Errorf("%s P=%d M=%g: MadPipe %.4f s is worse than PipeDream+1F1B* %.4f s", tc.model, tc.workers, tc.memory, r.PeriodSeconds, pd)
		}
	}
	if gm := math.Exp(logRatio / float64(n)); gm < 1.2 {
		t.Errorf("geometric mean of PipeDream/MadPipe periods %.3f, want >= 1.2", gm)
	}
}

// madCheckStarWithSimulator runs the 1F1B* schedule of a contiguous
// partition through core/schedule's simulator and checks that it keeps the
// same number of activations per stage and stays within memory.
func madCheckStarWithSimulator(t *testing.T, prof model.Profile, firsts []int, bw, memory float64, star *OneFOneBStar) {
	t.Helper()
	c, _ := newMadChain(prof, bw)
	bounds, _ := madStageBounds(c, firsts)
	var costs []schedule.StageCost
	for _, b := range bounds {
		sc := schedule.StageCost{FwdSeconds: c.forward(b[0], b[1]), BwdSeconds: c.compute(b[0], b[1]) - c.forward(b[0], b[1]),
			ActivationBytes: c.stored(b[0], b[1]), WeightBytes: c.fixedMemory(b[0], b[1])}
		if b[1] < c.layers-1 {
			sc.CommSeconds = c.output[b[1]] / bw
		}
		costs = append(costs, sc)
	}
	rep, err := schedule.CheckStar(context.Background(), costs, star.PeriodSeconds*(1+1e-9), memory, 4*len(costs)+8)
	if err != nil {
		t.Fatal(err)
	}
	for s := range costs {
		if rep.Groups[s] != star.Activations[s] {
			t.Fatalf("simulator groups %v, ours %v", rep.Groups, star.Activations)
		}
	}
	if len(rep.OverLimit) > 0 {
		t.Fatalf("simulator: devices %v over %g bytes (peaks %v)", rep.OverLimit, memory, rep.PeakMemoryBytes)
	}
}

func TestMadPipeBadInput(t *testing.T) {
	good := madRandomChain(rand.New(rand.NewPCG(1, 1)), 4)
	bad := madRandomChain(rand.New(rand.NewPCG(1, 1)), 4)
	bad.Layers[2].BwdSeconds = math.NaN()
	neg := madRandomChain(rand.New(rand.NewPCG(1, 1)), 4)
	neg.Layers[1].ParameterBytes = -1
	cases := []struct {
		prof    model.Profile
		workers int
		bw, mem float64
		want    string
	}{
		{good, 0, 1e9, 1e9, "workers: must be >= 1, got 0"},
		{good, 2, 0, 1e9, "bandwidth_bytes_per_sec"},
		{good, 2, 1e9, math.NaN(), "memory_bytes: must be a finite number > 0, got NaN"},
		{good, 2, 1e9, math.Inf(1), "memory_bytes"},
		{model.Profile{}, 2, 1e9, 1e9, "profile.layers: must have at least one layer"},
		{bad, 2, 1e9, 1e9, "profile.layers[2].bwd_seconds"},
		{neg, 2, 1e9, 1e9, "profile.layers[1].parameter_bytes: must be a finite number >= 0, got -1"},
		{good, 2, 1e9, 1, "needs"},
	}
	for _, tc := range cases {
		_, err := MadPipe(context.Background(), tc.prof, tc.workers, tc.bw, tc.mem, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("MadPipe(workers=%d, bw=%g, mem=%g): error %v, want %q", tc.workers, tc.bw, tc.mem, err, tc.want)
		}
	}
}

func TestMadPipeCancelled(t *testing.T) {
	g, err := modelprofiles.Graph("resnet50")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := MadPipe(ctx, g.Chain(), 8, 12e9, 16e9, nil); err != context.Canceled {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestMadPipeProgress(t *testing.T) {
	prof := madRandomChain(rand.New(rand.NewPCG(13, 14)), 12)
	var seen []float64
	if _, err := MadPipe(context.Background(), prof, 4, 1e10, 2e9, func(done, total int) { seen = append(seen, float64(done)/float64(total)) }); err != nil {
		t.Fatal(err)
	}
	if len(seen) < 2 || seen[len(seen)-1] != 1 {
		t.Fatalf("progress %v: want several reports ending at done = total", seen)
	}
	for i, f := range seen {
		if f < 0 || f > 1 || (i > 0 && f < seen[i-1]) {
			t.Fatalf("progress %v: not non-decreasing in [0, total]", seen)
		}
	}
}
