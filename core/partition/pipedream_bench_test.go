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

// BenchmarkPipeDreamDefaultCluster times the DP on the playground's default
// cluster, 128 servers × 8 GPUs (NVLink 300 GB/s, 25 GB/s between servers,
// 80 GB each), for the profiles whose plans there took seconds: the bounded
// row search ("fast") and the reference row search it replaced, side by
// side under the same load (GNMT-16 fast only: the reference takes over
// 10 s).
func BenchmarkPipeDreamDefaultCluster(b *testing.B) {
	for _, name := range []string{"resnet50", "resnet101", "gnmt_large"} {
		c := graphCuts(b, name)
		opt := PipeDreamOptions{Levels: levels(8, 300e9, 128, 25e9), MemoryBytes: 80e9}
		for _, v := range []struct {
			name string
			row  func(*pdSolver, int, int, []float64, []pdChoice)
		}{{"fast", nil}, {"reference", refRowDP}} {
			if name == "gnmt_large" && v.row != nil {
				continue
			}
			b.Run(name+"/"+v.name, func(b *testing.B) {
				for b.Loop() {
					if _, err := solveWith(b, c, opt, v.row); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
