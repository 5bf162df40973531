package partition

import (
	"context"
	"math"
	"testing"

	"pipeplan/core/model"
)

// FuzzMadPipe feeds MadPipe arbitrary small chains, worker counts, memory
// limits and bandwidths (NaN, negative and huge included): it must return an
// error or a result that madCheckResult accepts, never panic.
func FuzzMadPipe(f *testing.F) {
	f.Add([]byte{10, 20, 30, 40, 50, 60, 70, 80}, uint8(2), 1e9, 1e10)
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, uint8(4), 3e8, 1e9)
	f.Add([]byte{0, 0, 0, 0, 255, 255, 255, 255}, uint8(3), 5e8, 1e8)
	f.Add([]byte{9, 9, 9, 9}, uint8(0), math.NaN(), -1.0)
	f.Add([]byte{200, 1, 200, 1, 1, 200, 1, 200, 50, 50, 50, 50}, uint8(7), 2e9, math.Inf(1))
	f.Fuzz(func(t *testing.T, data []byte, workers uint8, memory, bandwidth float64) {
		if len(data) > 64 {
			data = data[:64]
		}
		prof := model.Profile{MicrobatchSize: 1}
		for i := 0; i+4 <= len(data); i += 4 {
			prof.Layers = append(prof.Layers, model.Layer{
				FwdSeconds:            float64(data[i]) * 1e-4,
				BwdSeconds:            float64(data[i+1]) * 2e-4,
				OutputActivationBytes: float64(data[i+2]) * 1e6,
				ParameterBytes:        float64(data[i+3]) * 1e6,
			})
		}
		w := int(workers % 9)
		r, err := MadPipe(context.Background(), prof, w, bandwidth, memory, nil)
		if err != nil {
			return
		}
		if math.IsNaN(r.PeriodSeconds) || math.IsInf(r.PeriodSeconds, 0) {
			t.Fatalf("period %v", r.PeriodSeconds)
		}
		madCheckResult(t, prof, w, bandwidth, memory, r)
	})
}
