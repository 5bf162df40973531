package partition

import (
	"context"
	"math/rand/v2"
	"testing"

	"pipeplan/core/model"
)

// madRandomChain is a chain of n layers with times, activations and weights
// spread over an order of magnitude, as in real profiles.
func madRandomChain(rng *rand.Rand, n int) model.Profile {
	p := model.Profile{Name: "random", MicrobatchSize: 1}
	for i := 0; i < n; i++ {
		p.Layers = append(p.Layers, model.Layer{
			FwdSeconds:            0.001 + 0.01*rng.Float64(),
			BwdSeconds:            0.002 + 0.02*rng.Float64(),
			OutputActivationBytes: 1e6 + 1e8*rng.Float64(),
			ParameterBytes:        1e6 + 5e7*rng.Float64(),
		})
	}
	return p
}

// madBruteFeasible enumerates every partition of the chain into stages and
// every choice of normal or special processor per stage (at most workers-1
// normal ones; with contiguous, workers normal ones and no special), and
// reports whether one has period at most x under the model of MadPipe-DP at
// T̂ = x (madpipe-2020 §4.2.1-4.2.2).
func madBruteFeasible(c *madChain, workers int, memory, x float64, contiguous bool) bool {
	L := c.layers
	for cuts := 0; cuts < 1<<(L-1); cuts++ {
		var stages [][2]int
		first := 0
		for i := 0; i < L-1; i++ {
			if cuts&(1<<i) != 0 {
				stages = append(stages, [2]int{first, i})
				first = i + 1
			}
		}
		stages = append(stages, [2]int{first, L - 1})
		for special := 0; special < 1<<len(stages); special++ {
			normal, limit := len(stages), workers-1
			for s := range stages {
				if special&(1<<s) != 0 {
					normal--
				}
			}
			if contiguous {
				limit = workers
			}
			if normal > limit || contiguous && special != 0 {
				continue
			}
			if madBruteEvaluate(c, stages, special, memory, x) {
				return true
			}
		}
	}
	return false
}

// madBruteEvaluate walks one allocation from its last stage, as 1F1B*
// builds groups, and checks every load and memory bound.
func madBruteEvaluate(c *madChain, stages [][2]int, special int, memory, x float64) bool {
	v, load, mem := 0.0, 0.0, 0.0
	for s := len(stages) - 1; s >= 0; s-- {
		k, l := stages[s][0], stages[s][1]
		u := c.compute(k, l)
		g := madGroups(v+u, x)
		if special&(1<<s) != 0 {
			load += u
			mem += c.memory(k, l, max(g-1, 0))
		} else if u > x || c.memory(k, l, g) > memory {
			return false
		}
		v = madOplus(v, u, x)
		if k > 0 {
			if c.comm(k-1) > x {
				return false
			}
			v = madOplus(v, c.comm(k-1), x)
		}
	}
	return load <= x && mem <= memory
}

// TestMadPipeDPMatchesBruteForce checks that MadPipe-DP without pruning
// finds an allocation exactly when one exists under its model, with a
// special processor and restricted to contiguous allocations.
func TestMadPipeDPMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	agreeYes, agreeNo := 0, 0
	for trial := 0; trial < 300; trial++ {
		L := 2 + rng.IntN(6)
		workers := 1 + rng.IntN(4)
		c, err := newMadChain(madRandomChain(rng, L), 1e9+2e10*rng.Float64())
		if err != nil {
			t.Fatal(err)
		}
		memory := 1e8 + 2e9*rng.Float64()
		x := (0.3 + 1.5*rng.Float64()) * c.totalCompute() / float64(workers)
		contiguous := trial%3 == 0
		d := &madDP{c: c, workers: workers, memory: memory, specialOffset: 1, contiguous: contiguous}
		a, err := d.feasible(context.Background(), x)
		if err != nil {
			t.Fatal(err)
		}
		want := madBruteFeasible(c, workers, memory, x, contiguous)
		if (a != nil) != want {
			t.Fatalf("trial %d (L=%d, P=%d, M=%g, X=%g): DP found %v, brute force %v", trial, L, workers, memory, x, a, want)
		}
		if a == nil {
			agreeNo++
			continue
		}
		agreeYes++
		if per := madAllocationPeriod(c, a); per > x*(1+1e-12) {
			t.Fatalf("trial %d: DP allocation %v has period %g > X = %g", trial, a, per, x)
		}
		normal, specialStages := 0, 0
		for i, s := range a {
			if i > 0 && s.first != a[i-1].last+1 || i == 0 && s.first != 0 {
				t.Fatalf("trial %d: stages %v do not tile the chain", trial, a)
			}
			if s.special {
				specialStages++
			} else {
				normal++
			}
		}
		if normal > d.normal() || contiguous && specialStages > 0 || a[len(a)-1].last != L-1 {
			t.Fatalf("trial %d: allocation %v uses %d normal processors of %d or misses layers", trial, a, normal, workers-1)
		}
	}
	if agreeYes < 50 || agreeNo < 50 {
		t.Fatalf("random instances are one-sided: %d feasible, %d infeasible", agreeYes, agreeNo)
	}
}

// TestMadPipeDPGroupsAre1F1BStar checks the DP's activation count
// g(k, l, V) = ⌈(V+U)/T̂⌉ with V built by ⊕ (§4.2.2) against the groups of
// 1F1B* (§4.1) on contiguous partitions.
func TestMadPipeDPGroupsAre1F1BStar(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 500; trial++ {
		L := 2 + rng.IntN(12)
		prof := madRandomChain(rng, L)
		c, _ := newMadChain(prof, 1e9+2e10*rng.Float64())
		firsts := []int{0}
		for i := 1; i < L; i++ {
			if rng.IntN(3) == 0 {
				firsts = append(firsts, i)
			}
		}
		bounds, err := madStageBounds(c, firsts)
		if err != nil {
			t.Fatal(err)
		}
		period := randomFeasiblePeriod(rng, c, bounds)
		star, err := OneFOneBStarAt(prof, firsts, c.bandwidth, period)
		if err != nil {
			t.Fatal(err)
		}
		v := 0.0
		for s := len(bounds) - 1; s >= 0; s-- {
			k, l := bounds[s][0], bounds[s][1]
			if g := madGroups(v+c.compute(k, l), period); g != star.Activations[s] {
				t.Fatalf("trial %d stage %d: DP counts %d activations, 1F1B* %d (groups %v)", trial, s, g, star.Activations[s], star.Activations)
			}
			if m := c.memory(k, l, star.Activations[s]); m != star.MemoryBytes[s] {
				t.Fatalf("trial %d stage %d: memory %g, 1F1B* %g", trial, s, m, star.MemoryBytes[s])
			}
			v = madOplus(v, c.compute(k, l), period)
			if k > 0 {
				v = madOplus(v, c.comm(k-1), period)
			}
		}
	}
}

// TestOneFOneBStarMinPeriodIsMinimal checks on random contiguous
// partitionings that the returned period fits and a slightly shorter one
// does not (memory only grows as the period shrinks, §4.1).
func TestOneFOneBStarMinPeriodIsMinimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	checked := 0
	for trial := 0; trial < 1000; trial++ {
		L := 2 + rng.IntN(10)
		prof := madRandomChain(rng, L)
		bw := 1e9 + 2e10*rng.Float64()
		firsts := []int{0}
		for i := 1; i < L; i++ {
			if rng.IntN(2) == 0 {
				firsts = append(firsts, i)
			}
		}
		memory := 2e8 + 2e9*rng.Float64()
		star, err := OneFOneBStarMinPeriod(prof, firsts, bw, memory)
		if err != nil {
			if _, err1 := OneFOneBStarAt(prof, firsts, bw, 1e6); err1 != nil {
				t.Fatal(err1)
			}
			continue
		}
		for s, m := range star.MemoryBytes {
			if m > memory {
				t.Fatalf("trial %d: stage %d needs %g > %g at the returned period", trial, s, m, memory)
			}
		}
		shorter, err := OneFOneBStarAt(prof, firsts, bw, star.PeriodSeconds*(1-1e-9))
		if err != nil {
			continue // below the largest load: minimal
		}
		fits := true
		for _, m := range shorter.MemoryBytes {
			fits = fits && m <= memory
		}
		if fits {
			t.Fatalf("trial %d: period %g is not minimal, %g fits too", trial, star.PeriodSeconds, shorter.PeriodSeconds)
		}
		checked++
	}
	if checked < 50 {
		t.Fatalf("only %d memory-bound instances", checked)
	}
}

// TestMadSearchFindsTheFixedPoint checks Algorithm 1 (madpipe-2020 §4.2.3)
// on tiny chains: with the DP unpruned, the target period it returns is
// within its 0.1% tolerance of the smallest T̂ at which some allocation has
// period at most T̂ by brute force (feasibility only grows with T̂, so
// bisecting the brute force finds that point).
func TestMadSearchFindsTheFixedPoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	checked := 0
	for trial := 0; trial < 60; trial++ {
		L := 2 + rng.IntN(5)
		workers := 1 + rng.IntN(4)
		c, _ := newMadChain(madRandomChain(rng, L), 1e9+2e10*rng.Float64())
		memory := 3e8 + 2e9*rng.Float64()
		d := &madDP{c: c, workers: workers, memory: memory, specialOffset: 1}
		lb := c.totalCompute() / float64(workers)
		found, _, err := madSearch(context.Background(), d, lb, lb, func(int) {})
		if err != nil {
			t.Fatal(err)
		}
		ub := c.totalCompute() + c.totalComm()
		if !madBruteFeasible(c, workers, memory, ub, false) {
			if len(found) > 0 {
				t.Fatalf("trial %d: search found %v where brute force finds nothing", trial, found[0].stages)
			}
			continue
		}
		lo, hi := 0.0, ub
		for i := 0; i < 60; i++ {
			if mid := (lo + hi) / 2; madBruteFeasible(c, workers, memory, mid, false) {
				hi = mid
			} else {
				lo = mid
			}
		}
		if len(found) == 0 {
			t.Fatalf("trial %d: search found nothing, brute force feasible from %g", trial, hi)
		}
		if got := found[0].target; got < hi*(1-1e-9) || got > hi*(1+2e-3) {
			t.Fatalf("trial %d: search T̂ %g, brute-force fixed point %g", trial, got, hi)
		}
		checked++
	}
	if checked < 30 {
		t.Fatalf("only %d feasible instances", checked)
	}
}
