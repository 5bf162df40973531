package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipeplan/app"
	"pipeplan/app/request"
	"pipeplan/gpuprofiles"
)

// TestGavelThroughputIsThePlannersPrediction runs "gavel throughput" on a
// planned BERT-large job of 2 GPUs and checks each worker type's steps/s
// against the planner run directly on 2 GPUs of that type (one server),
// and with one GPU on each of 2 servers: samples/s ÷ global batch.
func TestGavelThroughputIsThePlannersPrediction(t *testing.T) {
	plan := request.Default().Plan
	plan.Model, plan.GlobalBatch = "bert-large", 512
	data, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Run([]string{"gavel", "throughput", "--plan", file, "--scale", "2", "--worker-types", "v100,nvidia-h100-sxm5-80gb", "--json"}, &out); err != nil {
		t.Fatal(err)
	}
	var got app.PlannedThroughputs
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	gpus := map[string]string{"v100": "nvidia-v100-sxm2-16gb", "nvidia-h100-sxm5-80gb": "nvidia-h100-sxm5-80gb"}
	precision := map[string]string{"v100": "fp16", "nvidia-h100-sxm5-80gb": "bf16"} // bf16 where the GPU has it
	for j, wt := range got.WorkerTypes {
		for _, placed := range []struct {
			nodes int
			got   float64
		}{{1, got.StepsPerSecond[j]}, {2, got.UnconsolidatedStepsPerSecond[j]}} {
			req := plan
			req.GPU, req.Nodes, req.GPUsPerNode, req.Precision = gpus[wt], placed.nodes, 2/placed.nodes, precision[wt]
			res, err := app.Plan(context.Background(), req)
			if err != nil || len(res.Candidates) == 0 {
				t.Fatalf("%s on %d servers: planner found nothing (%v, %s)", wt, placed.nodes, err, res.Problem)
			}
			if want := res.Candidates[0].SamplesPerSecond / 512; placed.got != want {
				t.Errorf("%s on %d servers: %v steps/s, the planner predicts %v", wt, placed.nodes, placed.got, want)
			}
		}
	}
	// Steps per dollar: steps/s × 3600 / (price of a GPU-hour × GPUs).
	list, err := gpuprofiles.PriceListByID("specialty-clouds-2026")
	if err != nil {
		t.Fatal(err)
	}
	price := list.DollarsPerGPUHour["nvidia-h100-sxm5-80gb"]
	out.Reset()
	if err := Run([]string{"gavel", "throughput", "--plan", file, "--scale", "2", "--worker-types", "nvidia-h100-sxm5-80gb,v100", "--price-list", "specialty-clouds-2026"}, &out); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(out.String(), "\n")
	if want := fmt.Sprintf("%.4g", got.StepsPerSecond[1]*3600/(price*2)); len(rows) < 4 || !strings.Contains(rows[1], want) || !strings.Contains(rows[3], "no price") {
		t.Errorf("steps per dollar: want %s for the H100 and no price for the V100, got\n%s", want, out.String())
	}
	if err := Run([]string{"gavel", "throughput", "--model", "no-such-model"}, &out); err == nil || !strings.Contains(err.Error(), `"no-such-model"`) {
		t.Errorf("unknown model: error %v, want one naming it", err)
	}
}
