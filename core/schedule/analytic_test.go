package schedule_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"pipeplan/core/schedule"
)

// TestInFlightMatchesSimulator checks the closed-form stash depths and weight
// versions against the peaks the event simulator of core/schedule measures
// when it runs the generated schedules.
func TestInFlightMatchesSimulator(t *testing.T) {
	analytic := 0
	for _, in := range schedule.Registry() {
		if !in.Analytic() {
			continue
		}
		analytic++
		k := struct {
			kind    schedule.Kind
			batches int
		}{in.Kind, 1}
		if in.MultiBatch {
			k.batches = 3
		}
		for p := 1; p <= 6; p++ {
			for _, m := range []int{1, 2, p, 2 * p, 3 * p, p + 1} {
				vs := []int{1}
				if in.Chunked {
					if m%p != 0 {
						continue
					}
					vs = []int{2, 3}
				}
				for _, v := range vs {
					batches := k.batches
					if batches > 1 {
						batches = max(batches, 3*p/m+1) // reach the steady state
					}
					s, err := schedule.Generate(k.kind, schedule.Options{Stages: p, Microbatches: m, Chunks: v, Batches: batches})
					_, _, ierr := k.kind.InFlight(p, 0, m, v)
					if (err == nil) != (ierr == nil) {
						t.Fatalf("%s p=%d m=%d v=%d: generator error %v, InFlight error %v", k.kind, p, m, v, err, ierr)
					}
					if err != nil {
						continue
					}
					tl, err := schedule.Simulate(context.Background(), s, schedule.Uniform(1, 2, 0, 0), nil)
					if err != nil {
						t.Fatalf("%s p=%d m=%d v=%d: %v", k.kind, p, m, v, err)
					}
					for i := 0; i < p; i++ {
						acts, versions, err := k.kind.InFlight(p, i, m, v)
						if err != nil {
							t.Fatal(err)
						}
						d := tl.Devices[i]
						if acts != d.PeakActivations {
							t.Errorf("%s p=%d m=%d v=%d stage %d: InFlight %d activations, simulator peak %d", k.kind, p, m, v, i, acts, d.PeakActivations)
						}
						if versions != d.PeakWeightVersions {
							t.Errorf("%s p=%d m=%d v=%d stage %d: InFlight %d weight versions, simulator peak %d", k.kind, p, m, v, i, versions, d.PeakWeightVersions)
						}
					}
				}
			}
		}
	}
	if analytic < 5 {
		t.Errorf("%d analytic kinds, want gpipe, 1f1b, interleaved, 2bw and pipedream at least", analytic)
	}
}

func TestBubbleFraction(t *testing.T) {
	cases := []struct {
		kind    schedule.Kind
		p, m, v int
		want    float64
	}{
		{schedule.GPipe, 4, 8, 1, 3.0 / 8},
		{schedule.OneFOneB, 8, 32, 1, 7.0 / 32},
		{schedule.Interleaved, 8, 32, 2, 7.0 / 64},
		{schedule.Interleaved, 64, 512, 2, 63.0 / 1024},
		{schedule.TwoBW, 8, 32, 1, 0},
		{schedule.PipeDream, 8, 32, 1, 0},
		{schedule.OneFOneB, 1, 32, 1, 0},
		{schedule.ZBH1, 8, 32, 1, 7.0 / 96},
		{schedule.ZBV, 8, 32, 2, 7.0 / 192},
		{schedule.ZBV, 8, 4, 2, 22.0 / 24},
	}
	for _, c := range cases {
		if got, err := c.kind.Bubble(c.p, c.m, c.v); err != nil || math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s p=%d m=%d v=%d: bubble %v (error %v), want %v", c.kind, c.p, c.m, c.v, got, err, c.want)
		}
	}
}

func TestInFlightErrors(t *testing.T) {
	if _, _, err := schedule.Kind("zigzag").InFlight(4, 0, 8, 1); err == nil {
		t.Error("unknown schedule: no error")
	}
	if _, _, err := schedule.OneFOneB.InFlight(4, 0, 8, 2); err == nil {
		t.Error("1f1b with v=2: no error")
	}
	if _, _, err := schedule.OneFOneB.InFlight(4, 4, 8, 1); err == nil {
		t.Error("stage 4 of 4: no error")
	}
	for _, in := range schedule.Registry() {
		_, _, ierr := in.Kind.InFlight(4, 0, 8, 1)
		_, berr := in.Kind.Bubble(4, 8, 1)
		if in.Analytic() != (ierr == nil) || in.Analytic() != (berr == nil) {
			t.Errorf("%s: analytic %v, InFlight error %v, Bubble error %v", in.Kind, in.Analytic(), ierr, berr)
		}
		if !in.Analytic() && !strings.Contains(ierr.Error(), string(in.Kind)) {
			t.Errorf("%s: InFlight error %q does not name the kind", in.Kind, ierr)
		}
	}
}
