package partition

import (
	"context"
	"math"
	"slices"
	"testing"

	"pipeplan/core/hw"
	"pipeplan/modelprofiles"
)

// graphCuts loads an embedded PipeDream profile's antichain states.
func graphCuts(t testing.TB, name string) *Cuts {
	t.Helper()
	g, err := modelprofiles.Graph(name)
	if err != nil {
		t.Fatal(err)
	}
	st, err := g.States()
	if err != nil {
		t.Fatal(err)
	}
	c, err := GraphCuts(st)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func levels(nb ...float64) []hw.Level {
	var l []hw.Level
	for q := 0; q < len(nb); q += 2 {
		l = append(l, hw.Level{Workers: int(nb[q]), BandwidthBytesPerSec: nb[q+1]})
	}
	return l
}

// pipedreamReference is the table "A few reference values from the original
// optimizer" of the pipedream anchor README: "Time per stage in pipeline"
// of optimizer_graph_hierarchical.py with --activation_compression_ratio 1,
// and the replicas per stage of one optimal partition (where unique).
var pipedreamReference = []struct {
	model    string
	levels   []hw.Level
	straight bool
	seconds  float64
	replicas []int // nil where the original has ties
}{
	{"vgg16", levels(4, 1e9), false, 0.205520896, []int{3, 1}}, // -n 4, -b defaults to 1e9
	{"vgg16", levels(16, 3.125e9), false, 0.045524807826, []int{15, 1}},
	{"vgg16", levels(4, 1.25e9), true, 0.381063, []int{1, 1, 1, 1}},
	{"alexnet", levels(16, 1.25e9), false, 0.0150994944, nil},
	{"resnet50", levels(4, 16e9, 4, 1.25e9), false, 0.0432084692, []int{8, 4, 4}},
	{"resnet50", levels(16, 1.25e9), false, 0.043847790044, []int{8, 5, 3}},
	{"gnmt", levels(4, 1.25e9), false, 0.025868, []int{1, 1, 1, 1}},
	{"gnmt", levels(4, 16e9, 3, 1.25e9), false, 0.011081, []int{1, 1, 1, 1, 1, 1, 1, 1, 3, 1}},
	{"gnmt_large", levels(16, 1.25e9), false, 0.058971, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 4, 1}},
}

// TestPipeDreamReproducesOriginalOptimizer checks every reference row to
// 1e-9 relative.
func TestPipeDreamReproducesOriginalOptimizer(t *testing.T) {
	for _, ref := range pipedreamReference {
		c := graphCuts(t, ref.model)
		res, err := PipeDream(context.Background(), c, PipeDreamOptions{Levels: ref.levels, Straight: ref.straight, CostModel: CostPipeDream}, nil)
		if err != nil {
			t.Fatalf("%s %v: %v", ref.model, ref.levels, err)
		}
		var reps []int
		for _, s := range res.Stages {
			reps = append(reps, s.Replicas)
		}
		if rel := math.Abs(res.BottleneckSeconds-ref.seconds) / ref.seconds; rel > 1e-9 {
			t.Errorf("%s %v straight=%v: bottleneck %.12g s, want %.12g (rel %.2g); replicas %v",
				ref.model, ref.levels, ref.straight, res.BottleneckSeconds, ref.seconds, rel, reps)
		}
		if ref.replicas != nil && !slices.Equal(reps, ref.replicas) {
			t.Errorf("%s %v: replicas per stage %v, want %v", ref.model, ref.levels, reps, ref.replicas)
		}
	}
}
