package gavel

import (
	"context"
	"math"
	"testing"
)

// paretoHiGHS is the optimum of the Pareto LP of maxMinFairness (z held at
// >= level*(1-paretoSlack), sum of scaled normalized throughputs maximized)
// on the 256-job packed instance, by HiGHS 1.x (scipy 1.10 linprog,
// method="highs", the same LP exported row by row).
const paretoHiGHS = 182.666282582

// paretoSum is the sum of the jobs' scaled normalized throughputs under
// the solution sol of a (the Pareto LP's objective).
func paretoSum(inst *Instance, t [][]float64, a *allocLP, sol []float64) float64 {
	sum := 0.0
	for m := range inst.Jobs {
		idx, val := a.throughput(m, fairnessScale(inst, t, m))
		for k, v := range idx {
			sum += val[k] * sol[v]
		}
	}
	return sum
}

// TestPackedParetoStep256: on the 256-job packed instance the Pareto step
// (paretoStep: the band on z stalls there, holding the variables solves)
// keeps every
// job at the max-min level within 1e-9 relative, hands out at least what
// fillIdle hands out, and reaches HiGHS' optimum of the Pareto LP within
// 1e-8 relative (holding the variables loses nothing here).
func TestPackedParetoStep256(t *testing.T) {
	inst := bigInstance(t, 256)
	if err := PairsFromTable(inst, DefaultThroughputs()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tt := inst.Throughputs
	a, z := maxMinLP(inst, tt, true)
	sol, err := a.solve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	level := sol[z]
	// fillIdle's hand-out of the max-min allocation, the current fallback.
	al := a.allocation(sol, 1)
	fillIdle(inst, tt, al)
	eff := effectiveThroughputs(inst, tt, al)
	fill := 0.0
	for m := range inst.Jobs {
		fill += fairnessScale(inst, tt, m) * eff[m]
	}
	sol2, err := paretoStep(ctx, inst, tt, a, z, sol)
	if err != nil {
		t.Fatalf("Pareto step: %v", err)
	}
	sum := paretoSum(inst, tt, a, sol2)
	for m := range inst.Jobs {
		idx, val := a.throughput(m, fairnessScale(inst, tt, m))
		got := 0.0
		for k, v := range idx {
			got += val[k] * sol2[v]
		}
		if got < level*(1-1e-9) {
			t.Errorf("job %d: scaled throughput %.12g below the max-min level %.12g", m, got, level)
		}
	}
	t.Logf("max-min level %.12g, sum %.12g (fillIdle %.12g, HiGHS Pareto LP %.12g)", level, sum, fill, paretoHiGHS)
	if sum < fill*(1-1e-12) {
		t.Errorf("sum %.12g below fillIdle's %.12g", sum, fill)
	}
	if math.Abs(sum-paretoHiGHS) > 1e-8*paretoHiGHS {
		t.Errorf("sum %.12g, HiGHS %.12g", sum, paretoHiGHS)
	}
}

// benchmarkPackedPareto times the max-min LP of packed max-min fairness
// and, if pareto, the Pareto step (paretoStep) on a prefix of
// the 2048-job instance.
func benchmarkPackedPareto(b *testing.B, pareto bool, n int, workers ...int) {
	inst := bigInstance(b, n, workers...)
	if err := PairsFromTable(inst, DefaultThroughputs()); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		a, z := maxMinLP(inst, inst.Throughputs, true)
		sol, err := a.solve(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if !pareto {
			continue
		}
		if _, err := paretoStep(ctx, inst, inst.Throughputs, a, z, sol); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPackedParetoStep256(b *testing.B) {
	benchmarkPackedPareto(b, true, 256)
}

func BenchmarkPackedMaxMinLP1024(b *testing.B) {
	benchmarkPackedPareto(b, false, 1024, 256, 256, 256)
}

func BenchmarkPackedParetoStep1024(b *testing.B) {
	benchmarkPackedPareto(b, true, 1024, 256, 256, 256)
}
