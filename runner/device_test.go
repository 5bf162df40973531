package main

import (
	"strings"
	"testing"
)

func TestSameGPU(t *testing.T) {
	for _, c := range []struct {
		id, name string
		want     bool
	}{
		{"nvidia-a100-sxm4-80gb", "NVIDIA A100-SXM4-80GB", true},
		{"nvidia-a100-sxm4-40gb", "NVIDIA A100-SXM4-80GB", false},
		{"nvidia-h100-sxm5-80gb", "NVIDIA H100 80GB HBM3", true},
		{"nvidia-v100-sxm2-16gb", "NVIDIA A100-SXM4-80GB", false},
		{"nvidia-a100-sxm4-80gb", "", false},
	} {
		if got := sameGPU(c.id, c.name); got != c.want {
			t.Errorf("sameGPU(%q, %q) = %v", c.id, c.name, got)
		}
	}
}

// TestCompareDevice: only the plan's GPU model and count is comparable;
// otherwise the note says what the report compares and what not.
func TestCompareDevice(t *testing.T) {
	p := loadPlan(t, "tiny-transformer.json") // 4 × nvidia-a100-sxm4-80gb
	for _, c := range []struct {
		dev   deviceInfo
		ranks int
		want  string
	}{
		{deviceInfo{Kind: "cuda", Name: "NVIDIA A100-SXM4-80GB"}, 4, ""},
		{deviceInfo{Kind: "cpu"}, 4, "the run used the CPU, not the plan's 4 × A100"},
		{deviceInfo{Kind: "cuda", Name: "NVIDIA H100 80GB HBM3"}, 4, "the run used NVIDIA H100 80GB HBM3, not the plan's A100"},
		{deviceInfo{Kind: "cuda", Name: "NVIDIA A100-SXM4-80GB"}, 2, "the run used 2 GPUs, the plan 4"},
	} {
		r := &Report{Ranks: c.ranks, Comparable: true, IterationRatio: 2, PerRank: []RankReport{{MemoryRatio: 3}}}
		r.compareDevice(p, c.dev)
		if c.want == "" {
			if !r.Comparable || r.Note != "" {
				t.Errorf("%+v: comparable %v, note %q", c.dev, r.Comparable, r.Note)
			}
			continue
		}
		if r.Comparable || r.IterationRatio != 0 || r.PerRank[0].MemoryRatio != 0 ||
			!strings.HasPrefix(r.Note, c.want) || !strings.Contains(r.Note, "compares the losses") {
			t.Errorf("%+v: comparable %v, ratios %v %v, note %q", c.dev, r.Comparable, r.IterationRatio, r.PerRank[0].MemoryRatio, r.Note)
		}
	}
}
