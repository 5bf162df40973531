package partition

import (
	"math"
	"testing"

	"context"
)

// plainPipeDream is the textbook recurrence, loop for loop as the original
// optimizer writes it (every row i at every level, m outer, then j, split
// state k, then m'), with no hoisting or pruning. It returns the objective.
func plainPipeDream(c *Cuts, opt PipeDreamOptions) float64 {
	s := newPDSolver(c, opt)
	n, inf := c.Len(), math.Inf(1)
	for lv, l := range opt.Levels {
		M, B, g := l.Workers, l.BandwidthBytesPerSec, s.below(lv)
		final := lv == len(opt.Levels)-1
		A := make([][]float64, n) // A[i][j*M+m]
		rows := n
		if final {
			rows = 1
		}
		for i := range rows {
			A[i] = make([]float64, n*M)
			for j := range n {
				for m := range M {
					A[i][j*M+m] = inf
					r := m + 1
					t := s.compute(lv, i, j)
					if j < i || math.IsInf(t, 1) || (opt.Straight && r > 1) {
						continue
					}
					act, w := span(c.ActivationBytes, i, j), span(c.ParameterBytes, i, j)
					if !s.fits(lv, act, w, r, r, M) {
						continue
					}
					v := s.stageSeconds(t, w, r, B, true, g)
					if !s.exact && j < n-1 {
						v = math.Max(v, 2*c.OutputBytes[j]/(B*float64(r)))
					}
					A[i][j*M+m] = v
				}
			}
			for m := 1; m < M; m++ {
				for j := i + 1; j < n; j++ {
					best := A[i][j*M+m]
					for k := range j {
						if !c.precedes(k, j) || k < i || (!s.exact && i > 0 && !c.precedes(i-1, k)) {
							continue
						}
						maxMP := m
						if opt.Straight {
							maxMP = 1
						}
						for mp := 1; mp <= maxMP; mp++ {
							t := s.compute(lv, k+1, j)
							act, w := span(c.ActivationBytes, k+1, j), span(c.ParameterBytes, k+1, j)
							if math.IsInf(t, 1) || !s.fits(lv, act, w, mp, m+1, M) || math.IsInf(A[i][k*M+m-mp], 1) {
								continue
							}
							bw := B * float64(mp)
							v := max(A[i][k*M+m-mp], s.stageSeconds(t, w, mp, B, false, g), 2*c.OutputBytes[k]/bw)
							if j < n-1 {
								v = max(v, 2*c.OutputBytes[j]/bw)
							}
							best = min(best, v)
						}
					}
					A[i][j*M+m] = best
				}
			}
		}
		if final {
			return A[0][(n-1)*M+M-1]
		}
		next := make([]float64, n*n)
		for i := range n {
			for j := range n {
				next[i*n+j] = A[i][j*M+M-1]
			}
		}
		s.comp[lv+1] = &stageTimes{c: c, n: n, full: next}
	}
	return inf
}

// TestPipeDreamEqualsPlainRecurrence checks that the hoisted and pruned DP
// finds exactly the plain recurrence's optimum on the embedded profiles the
// plain recurrence solves quickly, for both cost models, one and two levels,
// straight or not, with and without a memory limit.
func TestPipeDreamEqualsPlainRecurrence(t *testing.T) {
	for _, name := range []string{"alexnet", "vgg16", "gnmt", "squeezenet1_0", "resnet18"} {
		c := graphCuts(t, name)
		total := c.ActivationBytes[c.Len()-1] + c.ParameterBytes[c.Len()-1]
		for _, lv := range [][]float64{{8, 1.25e9}, {4, 16e9, 2, 1e9}} {
			for _, cm := range []CostModel{CostPipeDream, CostPipeplan} {
				for _, mem := range []float64{0, total / 3} {
					for _, straight := range []bool{false, true} {
						opt := PipeDreamOptions{Levels: levels(lv...), Straight: straight, MemoryBytes: mem, CostModel: cm}
						want := plainPipeDream(c, opt)
						res, err := PipeDream(context.Background(), c, opt, nil)
						if math.IsInf(want, 1) {
							if err == nil {
								t.Errorf("%s %v %s mem=%g straight=%v: got %v, plain recurrence finds nothing", name, lv, cm, mem, straight, res.BottleneckSeconds)
							}
							continue
						}
						if err != nil || math.Abs(res.BottleneckSeconds-want) > 1e-12*want {
							t.Errorf("%s %v %s mem=%g straight=%v: got %v (%v), plain recurrence %v", name, lv, cm, mem, straight, res, err, want)
						}
					}
				}
			}
		}
	}
}
