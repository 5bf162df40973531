package gavel

import (
	"context"
	"testing"
)

// benchmarkPolicy times one policy on a prefix of the 2048-job instance.
func benchmarkPolicy(b *testing.B, name string, n int, packed bool, workers ...int) {
	inst := bigInstance(b, n, workers...)
	if packed {
		if err := PairsFromTable(inst, DefaultThroughputs()); err != nil {
			b.Fatal(err)
		}
	}
	benchmarkPolicyOn(b, name, inst)
}

// benchmarkPolicyOn times one policy on inst.
func benchmarkPolicyOn(b *testing.B, name string, inst *Instance) {
	p, err := PolicyByName(name)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := p.Allocate(context.Background(), inst); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMaxMinFairnessPerf2048(b *testing.B) {
	benchmarkPolicy(b, "max_min_fairness_perf", 2048, false)
}

func BenchmarkMaxMinFairnessPerf256(b *testing.B) {
	benchmarkPolicy(b, "max_min_fairness_perf", 256, false)
}

func BenchmarkMaxMinFairnessPacked256(b *testing.B) {
	benchmarkPolicy(b, "max_min_fairness_packed", 256, true)
}

func BenchmarkMaxMinFairnessPacked1024(b *testing.B) {
	benchmarkPolicy(b, "max_min_fairness_packed", 1024, true, 256, 256, 256)
}

// BenchmarkMaxMinFairnessPacked1024PerJob is BenchmarkMaxMinFairnessPacked1024
// with priority weights 1 + m*1e-6, so no two jobs are interchangeable and
// the policy solves the LP with one variable per job and pair (classesOf
// finds no classes).
func BenchmarkMaxMinFairnessPacked1024PerJob(b *testing.B) {
	inst := bigInstance(b, 1024, 256, 256, 256)
	if err := PairsFromTable(inst, DefaultThroughputs()); err != nil {
		b.Fatal(err)
	}
	for m := range inst.Jobs {
		inst.Jobs[m].PriorityWeight = 1 + float64(m)*1e-6
	}
	if classesOf(inst, inst.Throughputs) != nil {
		b.Fatal("classesOf found classes")
	}
	benchmarkPolicyOn(b, "max_min_fairness_packed", inst)
}
