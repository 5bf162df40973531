package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"pipeplan/core/hw"
)

func TestGPUsCommand(t *testing.T) {
	var out bytes.Buffer
	if err := Run([]string{"gpus", "--json"}, &out); err != nil {
		t.Fatal(err)
	}
	var gpus []hw.GPU
	if err := json.Unmarshal(out.Bytes(), &gpus); err != nil {
		t.Fatalf("gpus --json is not a GPU list: %v", err)
	}
	if len(gpus) != 25 || gpus[10].ID != "nvidia-a100-sxm4-80gb" || gpus[10].PeakFLOPS["bf16"] != 312e12 {
		t.Errorf("gpus --json: %d entries, [10] = %s with bf16 %g; want 25 (gpus.json's 24, variants.json's H800), the A100 80GB at 312e12", len(gpus), gpus[10].ID, gpus[10].PeakFLOPS["bf16"])
	}
	out.Reset()
	if err := Run([]string{"gpus"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "nvidia-h100-sxm5-80gb  80") {
		t.Errorf("table lacks the H100 row with 80 GiB:\n%s", out.String())
	}
	if err := Run([]string{"gpus", "extra"}, &out); err == nil {
		t.Error("gpus extra: no error")
	}
}
