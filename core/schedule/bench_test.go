package schedule

import (
	"context"
	"testing"
)

// BenchmarkOneFOneB64x1024 is the target: generate and simulate
// 1F1B with p = 64, m = 1024 in under 50 ms natively.
func BenchmarkOneFOneB64x1024(b *testing.B) {
	c := Uniform(1, 2, 0, 0.1)
	b.ReportAllocs()
	for b.Loop() {
		s, err := Generate(OneFOneB, Options{Stages: 64, Microbatches: 1024})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Simulate(context.Background(), s, c, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkZBH1_64x1024 times the ZB-H1 order derivation and simulation.
func BenchmarkZBH1_64x1024(b *testing.B) {
	c := Uniform(1, 2, 1, 0)
	for b.Loop() {
		s, err := Generate(ZBH1, Options{Stages: 64, Microbatches: 1024})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Simulate(context.Background(), s, c, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderSVG64x512 times drawing the aggregated p = 64, m = 512 timeline.
func BenchmarkRenderSVG64x512(b *testing.B) {
	tl := simulate(b, OneFOneB, Options{Stages: 64, Microbatches: 512}, Uniform(1, 2, 0, 0))
	for b.Loop() {
		RenderSVG(tl, SVGOptions{})
	}
}
