package main

import (
	"fmt"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// BenchmarkNewRunConfig maps a GPT-3-sized 1F1B plan (p = 12, m = 768) to
// its ranks and action lists: the Go-side work before torchrun starts.
func BenchmarkNewRunConfig(b *testing.B) {
	p := &plan.Plan{
		Version: plan.Version, Planner: "manual",
		Model:   plan.Model{NumLayers: 96, Transformer: &model.Transformer{Layers: 96, Hidden: 12288, Heads: 96, Seq: 2048, Vocab: 51200}},
		Cluster: plan.Cluster{GPU: "nvidia-a100-sxm4-80gb", Nodes: 3, GPUsPerNode: 8},
		Execution: plan.Execution{TP: 1, PP: 12, DP: 2, Interleave: 1, CP: 1, EP: 1, MicrobatchSize: 1, GlobalBatch: 1536,
			Recompute: "none", Schedule: "1f1b"},
	}
	for i := range 12 {
		p.Stages = append(p.Stages, plan.Stage{FirstLayer: 8 * i, LastLayer: 8*i + 7, Replicas: 1})
	}
	if err := p.Validate(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := newRunConfig(p, options{device: "cuda", steps: 5}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseResult parses one rank's result of 1000 measured steps.
func BenchmarkParseResult(b *testing.B) {
	c := &runConfig{Stages: 2, Chunks: 1, ChunkPositions: []int{0, 1}, Steps: 1000}
	data := []byte(`{"rank":1,"stage":1,"replica":0,"step_seconds":[`)
	losses := []byte(`],"losses":[`)
	for i := range 1000 {
		sep := ","
		if i == 0 {
			sep = ""
		}
		data = fmt.Appendf(data, "%s%g", sep, 0.1+float64(i)*1e-4)
		losses = fmt.Appendf(losses, "%s%g", sep, 2-float64(i)*1e-3)
	}
	data = append(append(data, losses...), `],"peak_memory_bytes":1e9,"torch_version":"2.5.1"}`...)
	want := rankInfo{Rank: 1, Stage: 1}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := parseResult(data, want, c); err != nil {
			b.Fatal(err)
		}
	}
}
