package schedule

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// madpipe-2020 §4.1: groups are built from the last stage while their load
// fits in the period; a link counts as a stage of load 2·comm.
func TestStarGroups(t *testing.T) {
	even := func(u, comm float64) []StageCost {
		st := make([]StageCost, 4)
		for i := range st {
			st[i] = StageCost{FwdSeconds: u / 3, BwdSeconds: 2 * u / 3, CommSeconds: comm}
		}
		return st
	}
	for _, c := range []struct {
		stages []StageCost
		period float64
		want   []int
	}{
		{even(3, 0), 6, []int{2, 2, 1, 1}},
		{even(3, 0), 3, []int{4, 3, 2, 1}},
		{even(3, 0), 12, []int{1, 1, 1, 1}},
		{even(3, 0), 9, []int{2, 1, 1, 1}},
		{even(3, 0.5), 6, []int{4, 3, 2, 1}}, // s3 + link = 4, + s2 = 7 > 6: every stage alone
		{even(3, 0.5), 8, []int{2, 2, 1, 1}}, // s3+link+s2 = 7, then link+s1+link+s0 = 8
	} {
		got, err := StarGroups(c.stages, c.period)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("StarGroups(period %v, comm %v) = %v, %v; want %v", c.period, c.stages[0].CommSeconds, got, err, c.want)
		}
	}
	if _, err := StarGroups(even(3, 0), 2.5); err == nil || !strings.Contains(err.Error(), "period_seconds") {
		t.Errorf("period below a stage's load: got %v", err)
	}
}

// madpipe-2020 §4.1: every stage of group g keeps exactly g activations,
// and the schedule sustains the period: in steady state the input stage
// starts a new microbatch every T at most.
func TestOneFOneBStarMemoryAndPeriod(t *testing.T) {
	stages := []StageCost{
		{FwdSeconds: 1, BwdSeconds: 2, ActivationBytes: 100, WeightBytes: 7},
		{FwdSeconds: 2, BwdSeconds: 3, ActivationBytes: 50, WeightBytes: 7},
		{FwdSeconds: 1, BwdSeconds: 1, ActivationBytes: 80, WeightBytes: 7},
		{FwdSeconds: 1, BwdSeconds: 2, ActivationBytes: 60, WeightBytes: 7},
		{FwdSeconds: 0.5, BwdSeconds: 1, ActivationBytes: 10, WeightBytes: 7},
	}
	for _, period := range []float64{5, 6, 8, 13} {
		rep, err := CheckStar(context.Background(), stages, period, 300, 40)
		if err != nil {
			t.Fatal(err)
		}
		var over []int
		for d, st := range rep.Timeline.Devices {
			g := rep.Groups[d]
			if st.PeakActivations != g {
				t.Errorf("T=%v stage %d (group %d): %d activations, want %d", period, d, g, st.PeakActivations, g)
			}
			mem := float64(g)*stages[d].ActivationBytes + stages[d].WeightBytes
			if rep.PeakMemoryBytes[d] != mem {
				t.Errorf("T=%v stage %d: peak %v bytes, want %v", period, d, rep.PeakMemoryBytes[d], mem)
			}
			if mem > 300 {
				over = append(over, d)
			}
		}
		if !slices.Equal(rep.OverLimit, over) {
			t.Errorf("T=%v: over limit %v, want %v", period, rep.OverLimit, over)
		}
		var starts []float64
		for _, o := range rep.Timeline.Ops[0] {
			if o.Kind == Forward {
				starts = append(starts, o.StartSeconds)
			}
		}
		for k := 10; k < 30; k++ {
			if gap := starts[k+1] - starts[k]; gap > period+1e-9 {
				t.Errorf("T=%v: input stage starts microbatch %d %v after the previous one, want <= T", period, k+1, gap)
			}
		}
	}
}

func TestOneFOneBStarRejectsBadGroups(t *testing.T) {
	for _, g := range [][]int{{1, 2}, {0, 0}, {1}} {
		if _, err := Generate(OneFOneBStar, Options{Stages: 2, Microbatches: 4, Groups: g}); err == nil || !strings.Contains(err.Error(), "groups") {
			t.Errorf("groups %v: got %v", g, err)
		}
	}
}
