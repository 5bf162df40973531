package request

import (
	"strconv"
	"strings"
	"testing"
)

// TestDecodePlanCalibration: plan.calibration must parse as a calibration
// of plan.gpu (the default plan's A100) and stay within its size limit.
func TestDecodePlanCalibration(t *testing.T) {
	cal := func(gpu string) string {
		return strconv.Quote(`{"gpu":"` + gpu + `","device":"NVIDIA A100-SXM4-80GB","precision":"bf16","measurements":[{"flops":1e12,"seconds":0.005}]}`)
	}
	p, err := DecodePlan([]byte(`{"calibration":` + cal("nvidia-a100-sxm4-80gb") + `}`))
	if err != nil || !strings.Contains(p.Calibration, `"flops":1e12`) {
		t.Fatalf("an A100 calibration of the A100 plan: %+v, %v", p.Calibration, err)
	}
	for _, c := range []struct{ body, want string }{
		{`{"calibration":` + cal("nvidia-h100-sxm5-80gb") + `}`, `measured on "nvidia-h100-sxm5-80gb" (NVIDIA A100-SXM4-80GB), but plan.gpu is "nvidia-a100-sxm4-80gb"`},
		{`{"calibration":"{}"}`, "calibration.precision: must name"},
		{`{"calibration":"` + strings.Repeat("x", MaxCalibrationBytes+1) + `"}`, "must be at most 32768 bytes, got 32769"},
	} {
		_, err := DecodePlan([]byte(c.body))
		if Field(err) != "plan.calibration" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.80s: got %v (field %q), want plan.calibration: %q", c.body, err, Field(err), c.want)
		}
	}
}
