package gavel

import (
	"math"
	"testing"
)

// TestUtilizationSeriesConservesBusyTime checks that the series spreads each
// round's busy GPU-time exactly: integrated over time it gives back the
// total, gaps between rounds count as idle, and many rounds are bucketed.
func TestUtilizationSeriesConservesBusyTime(t *testing.T) {
	const workers = 4
	rounds := []roundUsage{
		{start: 0, end: 10, busyGPUSeconds: 40},  // full
		{start: 10, end: 20, busyGPUSeconds: 10}, // a quarter
		{start: 30, end: 40, busyGPUSeconds: 20}, // after 10 s without rounds
	}
	got := utilizationSeries(rounds, workers)
	// Three samples of 40/3 s: the first holds round 0 and a third of round
	// 1, the second the rest of round 1 and idle time, the third idle time
	// and round 2.
	want := []float64{(40 + 10.0/3) / (workers * 40.0 / 3), (20.0 / 3) / (workers * 40.0 / 3), 20 / (workers * 40.0 / 3)}
	if len(got) != 3 {
		t.Fatalf("%d samples for 3 rounds, want 3", len(got))
	}
	// 3 samples of 40/3 s each: integrate and compare with the rounds' total.
	total := 0.0
	for _, u := range got {
		total += u.Utilization * workers * (u.EndSeconds - u.StartSeconds)
	}
	if math.Abs(total-70) > 1e-9 {
		t.Errorf("integrated busy time %v, want 70 GPU-seconds", total)
	}
	for i, w := range want {
		if math.Abs(got[i].Utilization-w) > 1e-12 {
			t.Errorf("sample %d = %v, want %v", i, got[i].Utilization, w)
		}
	}
	if got[0].StartSeconds != 0 || got[2].EndSeconds != 40 {
		t.Errorf("series spans %v..%v, want 0..40", got[0].StartSeconds, got[2].EndSeconds)
	}

	var many []roundUsage
	for i := range 1000 {
		many = append(many, roundUsage{start: float64(i), end: float64(i + 1), busyGPUSeconds: float64(min(i%5, 1)) * workers})
	}
	series := utilizationSeries(many, workers)
	if len(series) != maxUtilizationSamples {
		t.Fatalf("%d samples, want %d", len(series), maxUtilizationSamples)
	}
	for _, u := range series {
		if math.Abs(u.Utilization-0.8) > 1e-9 {
			t.Fatalf("rounds busy 4 of every 5 average %v in %+v, want 0.8", u.Utilization, u)
		}
	}
	if utilizationSeries(nil, workers) != nil {
		t.Error("a series without rounds")
	}
}
