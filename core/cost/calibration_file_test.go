package cost

import (
	"math"
	"strings"
	"testing"
)

// TestParseCalibration: a file of timed matmuls gives, with the GPU's peak,
// the curve of their achieved efficiencies (FLOPs / (seconds × peak),
// averaged per size), here 2·1024³ FLOPs in 1 ms and 1.5 ms on a 10 TFLOP/s
// device: 2.147e9 / (1e-3 × 1e13) = 0.2147 and 0.1432, mean 0.1789.
func TestParseCalibration(t *testing.T) {
	c, err := ParseCalibration([]byte(`{"gpu": "", "device": "cpu", "precision": "fp32",
		"measurements": [{"flops": 2147483648, "seconds": 0.001}, {"flops": 2147483648, "seconds": 0.0015}, {"flops": 16777216, "seconds": 0.0001}]}`))
	if err != nil {
		t.Fatal(err)
	}
	curve, err := Calibrate(c.Measurements, 1e13)
	if err != nil {
		t.Fatal(err)
	}
	want := (2147483648/(1e-3*1e13) + 2147483648/(1.5e-3*1e13)) / 2
	if len(curve.Points) != 2 || math.Abs(curve.Points[1].Efficiency-want) > 1e-12 || curve.Points[0].FLOPs != 16777216 {
		t.Errorf("curve %+v, want the 2^31-FLOP point at %v", curve.Points, want)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"precision": "bf16", "measurements": []}`, "calibration.measurements: need at least one, got none"},
		{`{"precision": "", "measurements": [{"flops": 1, "seconds": 1}]}`, "calibration.precision: must name"},
		{`{"precision": "bf16", "measurements": [{"flops": 1, "seconds": 0}]}`, "calibration.measurements[0].seconds: must be in [1e-12, 1e+06], got 0"},
		{`{"precision": "bf16", "measurements": [{"flops": -1, "seconds": 1}]}`, "calibration.measurements[0].flops"},
		{`{"precision": "bf16", "measurments": []}`, `calibration: json: unknown field "measurments"`},
		{`{"precision": "bf16", "measurements": [{"flops": 1, "seconds": 1}]} {}`, "trailing data"},
		{strings.Repeat(" ", MaxCalibrationBytes+1), "over the 1048576-byte limit"},
	} {
		if _, err := ParseCalibration([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.60q: got %v, want %q", tc.in, err, tc.want)
		}
	}
}

func FuzzParseCalibration(f *testing.F) {
	f.Add([]byte(`{"gpu": "nvidia-h100-sxm5-80gb", "device": "NVIDIA H100 80GB HBM3", "precision": "bf16", "measurements": [{"flops": 1e9, "seconds": 1e-5}]}`))
	f.Add([]byte(`{"precision": "fp32", "measurements": [{"flops": 1e25, "seconds": 1e-12}, {"flops": 1, "seconds": 1e6}]}`))
	f.Add([]byte(`{"precision": "bf16", "measurements": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCalibration(data)
		if err != nil {
			return
		}
		for _, peak := range []float64{1e9, 1e18} { // a CPU core to beyond any GPU
			if _, err := Calibrate(c.Measurements, peak); err != nil {
				t.Fatalf("a parsed calibration did not calibrate at peak %g: %v", peak, err)
			}
		}
	})
}
