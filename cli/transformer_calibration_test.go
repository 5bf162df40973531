package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipeplan/core/cost"
	"pipeplan/gpuprofiles"
)

// writeCalibration writes a calibration of gpu at bf16 whose matmuls run
// at slowdown × the time the default curve gives at each of its points.
func writeCalibration(t *testing.T, dir, gpu string, slowdown float64) string {
	t.Helper()
	g, err := gpuprofiles.ByID(gpu)
	if err != nil {
		t.Fatal(err)
	}
	peak, err := g.Peak("bf16")
	if err != nil {
		t.Fatal(err)
	}
	curve, err := cost.DefaultEfficiency(g, "bf16")
	if err != nil {
		t.Fatal(err)
	}
	cal := cost.Calibration{GPU: gpu, Device: g.Name, Precision: "bf16", Source: "test: the default curve's points"}
	for _, p := range curve.Points {
		cal.Measurements = append(cal.Measurements, cost.Measurement{FLOPs: p.FLOPs, Seconds: slowdown * p.FLOPs / (peak * p.Efficiency)})
	}
	data, err := json.Marshal(cal)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "cal.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTransformerCalibration: a calibration that measures exactly the
// default efficiency curve predicts the default's iteration time; one
// whose matmuls take twice as long predicts a longer one, but less than
// twice (communication, memory-bound kernels and the optimizer do not
// slow down); a calibration of another GPU or precision is refused.
func TestTransformerCalibration(t *testing.T) {
	dir := t.TempDir()
	const gpu = "nvidia-a100-sxm4-80gb"
	base := []string{"transformer", "--model", "llama3-8b", "--gpu", gpu, "--gpus", "8", "--batch", "64",
		"--tp", "2", "--pp", "2", "--microbatch", "1", "--interleave", "1", "--recompute", "selective", "--json"}
	iteration := func(extra ...string) float64 {
		t.Helper()
		var out bytes.Buffer
		if err := Run(append(append([]string(nil), base...), extra...), &out); err != nil {
			t.Fatalf("%v: %v", extra, err)
		}
		var res struct {
			Plan struct {
				Predictions struct {
					IterationSeconds float64 `json:"iteration_seconds"`
				} `json:"predictions"`
			} `json:"plan"`
		}
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		return res.Plan.Predictions.IterationSeconds
	}
	def := iteration()
	same := iteration("--calibration", writeCalibration(t, dir, gpu, 1))
	if !(def > 0) || math.Abs(same-def) > 1e-9*def {
		t.Errorf("the default curve measured: %v s, the default: %v s", same, def)
	}
	slow := iteration("--calibration", writeCalibration(t, dir, gpu, 2))
	if !(slow > 1.2*def && slow < 2*def) {
		t.Errorf("matmuls twice as slow: %v s against %v s", slow, def)
	}
	var out bytes.Buffer
	err := Run(append(append([]string(nil), base...), "--calibration", writeCalibration(t, dir, "nvidia-h100-sxm5-80gb", 1)), &out)
	if err == nil || !strings.Contains(err.Error(), "--calibration") || !strings.Contains(err.Error(), `but plan.gpu is "nvidia-a100-sxm4-80gb"`) {
		t.Errorf("another GPU's calibration: %v", err)
	}
	err = Run(append(append([]string(nil), base...), "--precision", "fp8", "--calibration", writeCalibration(t, dir, gpu, 1)), &out)
	if err == nil || !strings.Contains(err.Error(), "measured at bf16, but the model trains at fp8") {
		t.Errorf("a bf16 calibration of an fp8 model: %v", err)
	}
}
