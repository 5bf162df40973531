package partition

import (
	"context"
	"testing"

	"pipeplan/modelprofiles"
)

// BenchmarkPipeDream times the DP (states already built) on every embedded
// profile PipeDream's DP can handle, on the topologies PipeDream's authors
// used: 4 and 16 GPUs in one level, 4 servers × 4 and 2 servers × 8.
func BenchmarkPipeDream(b *testing.B) {
	tops := []struct {
		name string
		lv   []float64
	}{
		{"1x4", []float64{4, 1.25e9}}, {"1x16", []float64{16, 1.25e9}},
		{"4x4", []float64{4, 16e9, 4, 1.25e9}}, {"8x2", []float64{8, 16e9, 2, 1.25e9}},
	}
	for _, in := range modelprofiles.List() {
		if in.States == 0 {
			continue
		}
		c := graphCuts(b, in.Name)
		for _, top := range tops {
			for _, cm := range []CostModel{CostPipeDream, CostPipeplan} {
				b.Run(in.Name+"/"+top.name+"/"+string(cm), func(b *testing.B) {
					opt := PipeDreamOptions{Levels: levels(top.lv...), CostModel: cm}
					for b.Loop() {
						if _, err := PipeDream(context.Background(), c, opt, nil); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkStates times building the antichain states of each profile.
func BenchmarkStates(b *testing.B) {
	for _, in := range modelprofiles.List() {
		if in.States == 0 {
			continue
		}
		g, err := modelprofiles.Graph(in.Name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(in.Name, func(b *testing.B) {
			for b.Loop() {
				if _, err := g.States(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
