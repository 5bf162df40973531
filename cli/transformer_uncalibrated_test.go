package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestTransformerUncalibratedGPU: on the B200 and the MI300X, on which no
// published training run calibrated the cost model (issue 10), the text
// output's note and the JSON candidate say so; on the H100 neither does.
func TestTransformerUncalibratedGPU(t *testing.T) {
	args := []string{"transformer", "--model", "llama3-8b", "--gpus", "16", "--batch", "64",
		"--tp", "1", "--pp", "1", "--microbatch", "1", "--interleave", "1", "--recompute", "full"}
	const says = "uncalibrated GPU: no published training run on the "
	for _, gpu := range []string{"nvidia-b200-sxm", "amd-mi300x"} {
		run := append(append([]string{}, args...), "--gpu", gpu)
		var out bytes.Buffer
		if err := Run(run, &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "\nnote: ") || !strings.Contains(out.String(), "prediction is uncertain: "+says) {
			t.Errorf("%s: no calibration caveat in\n%s", gpu, out.String())
		}
		if c, _ := first(t, transformerJSON(t, run...))["caveat"].(string); !strings.HasPrefix(c, says) {
			t.Errorf("%s: JSON caveat %q", gpu, c)
		}
	}
	h100 := transformerJSON(t, append(args, "--gpu", "nvidia-h100-sxm5-80gb")...)
	note, _ := h100["note"].(string)
	if c, ok := first(t, h100)["caveat"]; ok || strings.Contains(note, "uncalibrated") {
		t.Errorf("H100: caveat %v, note %q", c, note)
	}
}
