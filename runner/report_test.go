package main

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSummarizeBruteForce checks the median and p90 against their
// definitions on random samples: half the values on each side of the
// median, and p90 the smallest sample value with at least 90% at or below it.
func TestSummarizeBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 40; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = math.Round(rng.Float64()*20) / 4 // ties on purpose
		}
		before := slices.Clone(xs)
		st := summarize(xs)
		if !slices.Equal(xs, before) {
			t.Fatal("summarize reordered its input")
		}
		below, above := 0, 0
		for _, x := range xs {
			if x < st.Median {
				below++
			}
			if x > st.Median {
				above++
			}
		}
		if below > n/2 || above > n/2 {
			t.Errorf("n=%d: median %v has %d below and %d above", n, st.Median, below, above)
		}
		var p90 float64 = math.Inf(1)
		for _, c := range xs {
			atOrBelow := 0
			for _, x := range xs {
				if x <= c {
					atOrBelow++
				}
			}
			if float64(atOrBelow) >= 0.9*float64(n) {
				p90 = min(p90, c)
			}
		}
		if st.P90 != p90 {
			t.Errorf("n=%d: p90 %v, brute force %v", n, st.P90, p90)
		}
	}
	if got := summarize([]float64{1, 2, 3, 10}); got.Median != 2.5 || got.P90 != 10 {
		t.Errorf("summarize(1,2,3,10) = %+v, want median 2.5, p90 10", got)
	}
	if got := summarize(nil); got != (Stats{}) {
		t.Errorf("summarize(nil) = %+v", got)
	}
}

func TestNewReport(t *testing.T) {
	p := loadPlan(t, "tiny-profile.json") // predictions: 0.02 s, 400 samples/s, stage peaks 4e8, 5e8
	c, err := newRunConfig(p, options{device: "cpu", steps: 3, warmup: 1})
	if err != nil {
		t.Fatal(err)
	}
	c.Replicas = 2 // as if two pipelines: losses average over them
	results := []*rankResult{
		{Rank: 0, Stage: 0, StepSeconds: []float64{0.03, 0.01, 0.02}, PeakMemoryBytes: 2e8},
		{Rank: 1, Stage: 1, StepSeconds: []float64{0.01, 0.05, 0.02}, PeakMemoryBytes: 1e9, Losses: []float64{4, 2, 1, 1}},
		{Rank: 3, Stage: 1, Replica: 1, StepSeconds: []float64{0.01, 0.01, 0.04}, Losses: []float64{2, 2, 1, 0}},
	}
	r := newReport(p, c, results)
	// Each step takes its slowest rank: 0.03, 0.05, 0.04.
	if r.IterationSeconds.Median != 0.04 || r.IterationSeconds.P90 != 0.05 {
		t.Errorf("iteration %+v, want median 0.04, p90 0.05", r.IterationSeconds)
	}
	wantSamples := 2 * 4 * 2
	if r.SamplesPerStep != wantSamples || math.Abs(r.SamplesPerSecond-float64(wantSamples)/0.04) > 1e-9 {
		t.Errorf("samples/step %d, samples/s %v; want %d, %v", r.SamplesPerStep, r.SamplesPerSecond, wantSamples, float64(wantSamples)/0.04)
	}
	if math.Abs(r.IterationRatio-2) > 1e-12 || math.Abs(r.ThroughputRatio-r.SamplesPerSecond/400) > 1e-12 {
		t.Errorf("ratios %v, %v", r.IterationRatio, r.ThroughputRatio)
	}
	if !slices.Equal(r.Losses, []float64{3, 2, 1, 0.5}) {
		t.Errorf("losses %v, want the replica mean 3 2 1 0.5", r.Losses)
	}
	if k := r.PerRank[1]; k.PredictedPeakBytes != 5e8 || k.MemoryRatio != 2 || !k.MemoryMeasuredAsRSS {
		t.Errorf("rank 1 memory %+v, want predicted 5e8 (stage 1), ratio 2, RSS", k)
	}
	if !r.Comparable || r.Note != "" {
		t.Errorf("a full-size run is comparable: %v %q", r.Comparable, r.Note)
	}
	if err := r.checkReference([]float64{3, 2, 1, 0.4}); err != nil {
		t.Fatal(err)
	}
	if math.Abs(*r.MaxLossRelDiff-0.25) > 1e-12 {
		t.Errorf("max rel diff %v, want 0.25", *r.MaxLossRelDiff)
	}
	if err := r.checkReference([]float64{1}); err == nil {
		t.Error("a reference of the wrong length was accepted")
	}
	var b bytes.Buffer
	if err := r.writeTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"iteration s (median)", "0.04", "samples/s", "(RSS)", "max rel. diff 0.25"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestScaledDownReportNotComparable(t *testing.T) {
	p := loadPlan(t, "tiny-profile.json")
	c, err := newRunConfig(p, options{device: "cpu", scaleDown: true, steps: 1, warmup: 0})
	if err != nil {
		t.Fatal(err)
	}
	r := newReport(p, c, []*rankResult{{StepSeconds: []float64{1}}, {Rank: 1, Stage: 1, StepSeconds: []float64{1}, Losses: []float64{1}}})
	var b bytes.Buffer
	if err := r.writeTable(&b); err != nil {
		t.Fatal(err)
	}
	if r.Comparable || !strings.Contains(b.String(), "NOTE: --scale-down") || r.IterationRatio != 0 || r.PerRank[0].MemoryRatio != 0 {
		t.Errorf("scaled-down report: comparable %v, ratios %v %v\n%s", r.Comparable, r.IterationRatio, r.PerRank[0].MemoryRatio, b.String())
	}
}

func TestScheduleOverrideNotComparable(t *testing.T) {
	p := loadPlan(t, "tiny-profile.json")
	p.Execution.Schedule = "pipedream"
	if own, err := newRunConfig(p, options{device: "cpu", steps: 1}); err != nil || !own.Comparable || own.Versioning != "stashed" {
		t.Fatalf("pipedream plan run as its own: %+v, %v", own, err)
	}
	c, err := newRunConfig(p, options{device: "cpu", schedule: "1f1b", steps: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := newReport(p, c, []*rankResult{{StepSeconds: []float64{1}}, {Rank: 1, Stage: 1, StepSeconds: []float64{1}, Losses: []float64{1}}})
	if r.Comparable || r.Schedule != "1f1b" || r.IterationRatio != 0 || !strings.Contains(r.Note, "--schedule 1f1b: the plan was predicted for pipedream") {
		t.Errorf("report %+v", r)
	}
}
