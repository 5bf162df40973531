package cost

import (
	"math"
	"strings"
	"testing"

	"pipeplan/core/hw"
	"pipeplan/gpuprofiles"
)

func TestDefaultEfficiency(t *testing.T) {
	a100, err := gpuprofiles.ByID("nvidia-a100-sxm4-80gb")
	if err != nil {
		t.Fatal(err)
	}
	c, err := DefaultEfficiency(a100, hw.PrecisionBF16)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	ceiling := A100SustainedMatmulFraction * 271.2 / 312
	x0 := DefaultKernelLatencySeconds * 312e12 * ceiling
	for _, x := range []float64{1e6, 3e7, 1e9, 4.2e10, 1e12, 1e16} {
		want := ceiling * x / (x + x0)
		// Linear interpolation in log10 between half-decade knots stays within 3 %.
		if got := c.At(x); math.Abs(got-want) > 0.03*want {
			t.Errorf("At(%g) = %.4f, the curve's formula gives %.4f", x, got, want)
		}
	}
	// Monotone, and the time of a 1-TFLOP GEMM is its FLOPs at the ceiling plus about the latency.
	for x := 1e5; x < 1e17; x *= 1.7 {
		if c.At(x*1.7) < c.At(x) {
			t.Fatalf("efficiency falls between %g and %g FLOPs", x, x*1.7)
		}
	}
	big := 1e12
	if got, want := c.Seconds(big, 312e12), big/(312e12*ceiling)+DefaultKernelLatencySeconds; math.Abs(got-want) > 1e-3*want {
		t.Errorf("Seconds(1e12) = %g, want %g", got, want)
	}
	if c.Seconds(0, 312e12) != 0 {
		t.Error("zero FLOPs take time")
	}
	k80, _ := gpuprofiles.ByID("nvidia-k80-gk210-die")
	if _, err := DefaultEfficiency(k80, hw.PrecisionBF16); err == nil {
		t.Error("K80 bf16: no error")
	}
	// Without a measurement the assumed ceiling is used.
	v100, _ := gpuprofiles.ByID("nvidia-v100-sxm2-32gb")
	cv, err := DefaultEfficiency(v100, hw.PrecisionFP16)
	if err != nil {
		t.Fatal(err)
	}
	if got := cv.At(1e16); math.Abs(got-DefaultSustainedMatmulFraction*DefaultMatmulCeiling) > 1e-3 {
		t.Errorf("V100 large-GEMM efficiency %.4f, want %.4f", got, DefaultSustainedMatmulFraction*DefaultMatmulCeiling)
	}
}

// TestCalibrateRecoversCurve feeds timings generated from a known curve and
// checks that the calibrated curve reproduces them.
func TestCalibrateRecoversCurve(t *testing.T) {
	truth := SaturatingEfficiency(989e12, 0.6, 8e-6)
	var ms []Measurement
	for e := 8.0; e <= 13; e += 0.5 {
		x := math.Pow(10, e)
		sec := truth.Seconds(x, 989e12)
		ms = append(ms, Measurement{FLOPs: x, Seconds: sec * 0.98}, Measurement{FLOPs: x, Seconds: sec * 1.02})
	}
	c, err := Calibrate(ms, 989e12)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Points) != 11 {
		t.Fatalf("%d points, want one per distinct size (11)", len(c.Points))
	}
	for _, x := range []float64{1e8, 3e9, 1e11, 5e12} {
		want, got := truth.Seconds(x, 989e12), c.Seconds(x, 989e12)
		if math.Abs(got-want) > 0.05*want {
			t.Errorf("%g FLOPs: calibrated %g s, truth %g s", x, got, want)
		}
	}
	bad := []struct {
		ms   []Measurement
		peak float64
		want string
	}{
		{nil, 1e12, "measurements: need at least one"},
		{[]Measurement{{FLOPs: -1, Seconds: 1}}, 1e12, "measurements[0].flops"},
		{[]Measurement{{FLOPs: 1, Seconds: math.NaN()}}, 1e12, "measurements[0].seconds"},
		{[]Measurement{{FLOPs: 1, Seconds: 1}}, 0, "peak_flops"},
	}
	for _, b := range bad {
		if _, err := Calibrate(b.ms, b.peak); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("Calibrate(%v, %g): error %v, want %q", b.ms, b.peak, err, b.want)
		}
	}
}

func TestEfficiencyCurveValidate(t *testing.T) {
	bad := []struct {
		c    EfficiencyCurve
		want string
	}{
		{EfficiencyCurve{}, "efficiency.points: must have at least one point"},
		{EfficiencyCurve{Points: []EfficiencyPoint{{FLOPs: 1e9, Efficiency: 0.5}, {FLOPs: 1e8, Efficiency: 0.6}}}, "efficiency.points[1].flops"},
		{EfficiencyCurve{Points: []EfficiencyPoint{{FLOPs: 1e9, Efficiency: 1.5}}}, "efficiency.points[0].efficiency"},
		{EfficiencyCurve{Points: []EfficiencyPoint{{FLOPs: math.Inf(1), Efficiency: 0.5}}}, "efficiency.points[0].flops"},
	}
	for _, b := range bad {
		if err := b.c.Validate(); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: error %v, want %q", b.c, err, b.want)
		}
	}
}
