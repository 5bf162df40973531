package schedule

import (
	"context"
	"testing"
)

// benchGenerateSimulate times generating and simulating one schedule.
func benchGenerateSimulate(b *testing.B, kind Kind, o Options, c Costs) {
	b.ReportAllocs()
	for b.Loop() {
		s, err := Generate(kind, o)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Simulate(context.Background(), s, c, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOneFOneB64x1024 is the target: generate and simulate
// 1F1B with p = 64, m = 1024 in under 50 ms natively.
func BenchmarkOneFOneB64x1024(b *testing.B) {
	benchGenerateSimulate(b, OneFOneB, Options{Stages: 64, Microbatches: 1024}, Uniform(1, 2, 0, 0.1))
}

// BenchmarkZBH1_64x1024 times the ZB-H1 order derivation and simulation.
func BenchmarkZBH1_64x1024(b *testing.B) {
	benchGenerateSimulate(b, ZBH1, Options{Stages: 64, Microbatches: 1024}, Uniform(1, 2, 1, 0))
}

// BenchmarkZBV64x1024 times ZB-V (two chunks a device in a V).
func BenchmarkZBV64x1024(b *testing.B) {
	benchGenerateSimulate(b, ZBV, Options{Stages: 64, Microbatches: 1024}, Uniform(0.5, 1, 0.5, 0.1))
}

// BenchmarkInterleaved64x1024x4 times interleaved 1F1B with 4 chunks.
func BenchmarkInterleaved64x1024x4(b *testing.B) {
	benchGenerateSimulate(b, Interleaved, Options{Stages: 64, Microbatches: 1024, Chunks: 4}, Uniform(0.25, 0.5, 0, 0.1))
}

// BenchmarkRenderSVG64x512 times drawing the aggregated p = 64, m = 512 timeline.
func BenchmarkRenderSVG64x512(b *testing.B) {
	tl := simulate(b, OneFOneB, Options{Stages: 64, Microbatches: 512}, Uniform(1, 2, 0, 0))
	b.ReportAllocs()
	for b.Loop() {
		RenderSVG(tl, SVGOptions{})
	}
}
