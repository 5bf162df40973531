package partition

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"pipeplan/core/hw"
	"pipeplan/core/plan"
)

// TestSystemBandwidths checks what the adapter hands each planner on
// topologies where the levels differ: 2BW's bandwidth between servers is
// the level a group just larger than a server crosses (not the outermost
// level, not a level of one unit), MadPipe's the slowest level crossed.
func TestSystemBandwidths(t *testing.T) {
	lv := func(w int, bw float64) hw.Level { return hw.Level{Workers: w, BandwidthBytesPerSec: bw} }
	for _, tc := range []struct {
		name                string
		levels              []hw.Level
		gpus, perServer     int
		intra, inter, pairs float64
	}{
		{"servers in racks", []hw.Level{lv(8, 300e9), lv(4, 25e9), lv(2, 5e9)}, 64, 8, 300e9, 25e9, 5e9},
		{"a level of one rack", []hw.Level{lv(8, 300e9), lv(1, 100e9), lv(4, 12.5e9)}, 32, 8, 300e9, 12.5e9, 12.5e9},
		{"one server", []hw.Level{lv(4, 16e9), lv(1, 1e9)}, 4, 4, 16e9, 16e9, 16e9},
		{"one GPU", []hw.Level{lv(1, 16e9)}, 1, 1, 16e9, 16e9, 16e9},
		{"network faster than the server", []hw.Level{lv(2, 8e9), lv(2, 50e9)}, 4, 2, 8e9, 50e9, 8e9},
	} {
		s := System{Levels: tc.levels}
		if err := s.Validate(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if s.GPUs() != tc.gpus || s.GPUsPerServer() != tc.perServer {
			t.Errorf("%s: %d GPUs, %d per server; want %d, %d", tc.name, s.GPUs(), s.GPUsPerServer(), tc.gpus, tc.perServer)
		}
		if got := s.IntraServerBandwidthBytesPerSec(); got != tc.intra {
			t.Errorf("%s: intra-server %v, want %v", tc.name, got, tc.intra)
		}
		if got := s.InterServerBandwidthBytesPerSec(); got != tc.inter {
			t.Errorf("%s: inter-server %v, want %v", tc.name, got, tc.inter)
		}
		if got := s.PairBandwidthBytesPerSec(); got != tc.pairs {
			t.Errorf("%s: MadPipe's pairwise %v, want %v", tc.name, got, tc.pairs)
		}
	}
}

// TestTwoBWPlannerUsesServerBandwidths plans a chain on servers of 2 GPUs in
// racks of 2 behind a slow spine with the 2BW planner and checks it equals
// PlanTwoBW given B_high = the server's and B_low = the rack's bandwidth by
// hand, and differs from B_low = the spine's (the outermost level, which
// the CLI used to take).
func TestTwoBWPlannerUsesServerBandwidths(t *testing.T) {
	prof := randomChain(rand.New(rand.NewPCG(21, 6)), 6)
	sys := System{GPU: hw.GPU{ID: "x"}, Levels: []hw.Level{{Workers: 2, BandwidthBytesPerSec: 100e9},
		{Workers: 2, BandwidthBytesPerSec: 10e9}, {Workers: 2, BandwidthBytesPerSec: 0.1e9}}}
	twoBW, _ := Lookup(plan.PlannerTwoBW)
	got, err := twoBW.Plan(context.Background(), Problem{Profile: &prof, System: sys, Fixed: plan.Execution{GlobalBatch: 64}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := NewProfileBlocks(prof)
	if err != nil {
		t.Fatal(err)
	}
	byHand := func(inter float64) []Candidate {
		c, err := PlanTwoBW(context.Background(), blocks, TwoBWOptions{GPUs: 8, GPUsPerServer: 2,
			IntraServerBandwidthBytesPerSec: 100e9, InterServerBandwidthBytesPerSec: inter,
			MemoryBytes: math.MaxFloat64, BatchSize: 64, StateBytesPerWeightByte: SGDMomentumStateBytesPerWeightByte}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	rack, spine := byHand(10e9), byHand(0.1e9)
	if len(got) != len(rack) {
		t.Fatalf("%d candidates, by hand %d", len(got), len(rack))
	}
	differs := false
	for i := range got {
		if !samePredictions(got[i].Predictions, rack[i].Predictions) {
			t.Errorf("candidate %d: %+v, by hand with the rack's bandwidth %+v", i, got[i].Predictions, rack[i].Predictions)
		}
		if i < len(spine) && !samePredictions(got[i].Predictions, spine[i].Predictions) {
			differs = true
		}
	}
	if !differs {
		t.Error("the spine's bandwidth gives the same plan: the test does not tell the levels apart")
	}
}

// samePredictions compares the figures 2BW predicts.
func samePredictions(a, b plan.Predictions) bool {
	return a.SamplesPerSecond == b.SamplesPerSecond && a.BottleneckSeconds == b.BottleneckSeconds && a.PeakBytesPerGPU == b.PeakBytesPerGPU
}
