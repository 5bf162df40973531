package gavel

import (
	"context"
	"testing"
)

// benchmarkFTF times one finish-time fairness allocation of the 437-job
// simulator instance, by the Newton search or the former bisection, and
// reports its LPs.
func benchmarkFTF(b *testing.B, agnostic, bisection bool) {
	inst := ftfStallInstance(b)
	lps := 0
	for b.Loop() {
		if bisection {
			_, lps = ftfBisection(b, inst, agnostic)
			continue
		}
		var err error
		if _, lps, err = finishTimeFairness(context.Background(), inst, agnostic); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lps), "LPs/op")
}

func BenchmarkFinishTimeFairnessPerf437(b *testing.B) { benchmarkFTF(b, false, false) }

func BenchmarkFinishTimeFairnessPerf437Bisection(b *testing.B) { benchmarkFTF(b, false, true) }

func BenchmarkFinishTimeFairness437(b *testing.B) { benchmarkFTF(b, true, false) }

func BenchmarkFinishTimeFairness437Bisection(b *testing.B) { benchmarkFTF(b, true, true) }
