package partition

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/model"
)

// randomChain returns a chain of n layers with random costs, some zero.
func randomChain(rng *rand.Rand, n int) model.Profile {
	p := model.Profile{MicrobatchSize: 1}
	for range n {
		l := model.Layer{FwdSeconds: rng.Float64(), BwdSeconds: 2 * rng.Float64(),
			OutputActivationBytes: math.Floor(rng.Float64() * 4e9), ParameterBytes: math.Floor(rng.Float64() * 2e9)}
		if rng.IntN(4) == 0 {
			l.ParameterBytes = 0
		}
		p.Layers = append(p.Layers, l)
	}
	return p
}

// bruteForcePipeDream evaluates every partition of the chain into stages and
// every assignment of exactly M workers to them, straight from the layers,
// and returns the best bottleneck (+Inf if nothing fits). Stage q with r
// replicas, after which `used` of the M workers are taken, costs:
//   - pipedream: (T + 4(r−1)W/(B·r))/r, its input 2·a/(B·r) unless first and
//     its output 2·a/(B·r) unless first or last; memory
//     ceil((M−used)/r)·(A+W) (optimizer_graph_hierarchical.py);
//   - pipeplan: max(T, 2(r−1)/r·W/B)/r, input unless first and output
//     unless last at 2·a/(B·r); memory n(A+W)+2W, n = ceil((M−used+r)/r).
func bruteForcePipeDream(p model.Profile, M int, B float64, exact, straight bool, mem float64) float64 {
	n := len(p.Layers)
	best := math.Inf(1)
	var bounds []int // last layer of each stage
	var reps []int
	eval := func() { best = math.Min(best, evalStages(p, bounds, reps, M, B, exact, mem)) }
	// choose stage ends, then replica counts summing to M.
	var assign func(q, left int)
	assign = func(q, left int) {
		if q == len(bounds) {
			if left == 0 {
				eval()
			}
			return
		}
		maxR := left - (len(bounds) - q - 1)
		if straight {
			maxR = min(maxR, 1)
		}
		for r := 1; r <= maxR; r++ {
			reps = append(reps, r)
			assign(q+1, left-r)
			reps = reps[:len(reps)-1]
		}
	}
	var split func(from int)
	split = func(from int) {
		for last := from; last < n; last++ {
			bounds = append(bounds, last)
			if last == n-1 {
				if len(bounds) <= M {
					assign(0, M)
				}
			} else {
				split(last + 1)
			}
			bounds = bounds[:len(bounds)-1]
		}
	}
	split(0)
	return best
}

// evalStages is the bottleneck of one partition (stage q ends at layer
// bounds[q] and has reps[q] of the M workers), +Inf if a stage does not fit.
func evalStages(p model.Profile, bounds, reps []int, M int, B float64, exact bool, mem float64) float64 {
	n := len(p.Layers)
	worst, used, first := 0.0, 0, 0
	for q, last := range bounds {
		r := reps[q]
		used += r
		var t, w, act float64
		for _, l := range p.Layers[first : last+1] {
			t += l.FwdSeconds + l.BwdSeconds
			w += l.ParameterBytes
			act += l.OutputActivationBytes
		}
		rf := float64(r)
		var st float64
		var inflight int
		if exact {
			st = (t + 4*(rf-1)*w/(B*rf)) / rf
			inflight = (M - used + r - 1) / r
		} else {
			st = math.Max(t, cost.RingAllReduceBytes(r, w)/B) / rf
			inflight = (M - used + r + r - 1) / r
		}
		if q > 0 {
			st = math.Max(st, 2*p.Layers[first-1].OutputActivationBytes/(B*rf))
		}
		if last < n-1 && (q > 0 || !exact) {
			st = math.Max(st, 2*p.Layers[last].OutputActivationBytes/(B*rf))
		}
		if mem > 0 {
			need := float64(inflight) * (act + w)
			if !exact {
				need += 2 * w
			}
			if need > mem {
				return math.Inf(1)
			}
		}
		worst = math.Max(worst, st)
		first = last + 1
	}
	return worst
}

// TestPipeDreamMatchesBruteForce compares the DP with exhaustive enumeration
// on random chains (N <= 8 layers, M <= 8 workers), for both cost models,
// with and without replication and memory limits.
func TestPipeDreamMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 1500 {
		n, M := 1+rng.IntN(8), 1+rng.IntN(8)
		p := randomChain(rng, n)
		B := []float64{1e9, 1e10, 1e11}[rng.IntN(3)]
		straight := rng.IntN(4) == 0
		mem := 0.0
		if rng.IntN(2) == 0 {
			mem = math.Floor(rng.Float64() * 3e10)
		}
		cuts, err := ChainCuts(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, cm := range []CostModel{CostPipeDream, CostPipeplan} {
			want := bruteForcePipeDream(p, M, B, cm == CostPipeDream, straight, mem)
			opt := PipeDreamOptions{Levels: []hw.Level{{Workers: M, BandwidthBytesPerSec: B}}, Straight: straight, MemoryBytes: mem, CostModel: cm}
			res, err := PipeDream(context.Background(), cuts, opt, nil)
			if math.IsInf(want, 1) {
				if err == nil {
					t.Fatalf("trial %d %s: DP found %v, brute force nothing feasible", trial, cm, res.BottleneckSeconds)
				}
				continue
			}
			if err != nil {
				t.Fatalf("trial %d %s (n=%d M=%d straight=%v mem=%v): %v, brute force %v", trial, cm, n, M, straight, mem, err, want)
			}
			if math.Abs(res.BottleneckSeconds-want) > 1e-12*want {
				t.Fatalf("trial %d %s (n=%d M=%d straight=%v mem=%v): DP %v, brute force %v", trial, cm, n, M, straight, mem, res.BottleneckSeconds, want)
			}
			// The returned stages must tile the layers, use the M GPUs and
			// achieve the bottleneck.
			var bounds, reps []int
			next, gpus := 0, 0
			for _, s := range res.Stages {
				if s.FirstLayer != next || s.LastLayer < s.FirstLayer {
					t.Fatalf("trial %d %s: stages %+v do not tile %d layers", trial, cm, res.Stages, n)
				}
				next = s.LastLayer + 1
				gpus += s.Replicas
				bounds, reps = append(bounds, s.LastLayer), append(reps, s.Replicas)
			}
			if gpus != M || next != n {
				t.Fatalf("trial %d %s: stages %+v do not tile %d layers on %d GPUs", trial, cm, res.Stages, n, M)
			}
			if got := evalStages(p, bounds, reps, M, B, cm == CostPipeDream, mem); math.Abs(got-res.BottleneckSeconds) > 1e-12*got {
				t.Fatalf("trial %d %s: stages %+v evaluate to %v, DP says %v", trial, cm, res.Stages, got, res.BottleneckSeconds)
			}
		}
	}
}

func TestChainCutsRejectsOverflow(t *testing.T) {
	p := model.Profile{MicrobatchSize: 1, Layers: []model.Layer{{ParameterBytes: 1e308}, {ParameterBytes: 1e308}}}
	if _, err := ChainCuts(p); err == nil {
		t.Fatal("accepted parameter bytes that overflow")
	}
}
