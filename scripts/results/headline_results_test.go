package results

import (
	"math"
	"testing"
)

// TestPipeDreamResults pins the directions of PipeDream's Table 1 (SOSP'19)
// / Table 2.2: ResNet-50 stays data-parallel under our cost model; VGG-16
// and AlexNet on 16 GPUs at 1.25 GB/s get 15-1; GNMT on one 4-GPU server
// gets a straight pipeline under the original optimizer's cost model; every
// row the paper speeds up is predicted at least as fast as data parallelism.
func TestPipeDreamResults(t *testing.T) {
	rows, err := PipeDreamRows()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		p := r.Paper
		name := p.PaperModel + " " + clusterName(p)
		switch {
		case p.Model == "resnet50" && r.Config["pipeplan"] != "16":
			t.Errorf("%s: pipeplan picks %s, the paper data parallelism (16)", name, r.Config["pipeplan"])
		case p.Flat && r.Config["pipeplan"] != p.Config:
			t.Errorf("%s: pipeplan picks %s, the paper %s", name, r.Config["pipeplan"], p.Config)
		case p.Servers == 1 && r.Config["pipedream"] != "Straight":
			t.Errorf("%s: the original cost model picks %s, the paper Straight", name, r.Config["pipedream"])
		}
		for _, cm := range PipeDreamCostModels {
			if r.Speedup[cm] < 1-1e-9 {
				t.Errorf("%s, %s: predicted %.3f× of data parallelism, below 1", name, cm, r.Speedup[cm])
			}
		}
	}
}

// TestPTDPResults pins Table 4.1 within 10 % a row (the cost model's two
// efficiency constants were fitted on these rows: see core/cost), the
// interleaved schedule beating the non-interleaved one with a gap that
// closes as the batch grows (Figure 4.12), and t = 8 (one DGX node) being
// the best tensor-parallel size for the 162.2B model (Figure 4.13).
func TestPTDPResults(t *testing.T) {
	rows, err := PTDPTableRows()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 10 {
		t.Fatalf("%d rows of Table 4.1, want 10", len(rows))
	}
	for _, r := range rows {
		if e := r.Out.TFLOPSPerGPU/r.Paper.TFLOPS - 1; math.Abs(e) > 0.10 || !r.Out.Fits {
			t.Errorf("%s: %.1f TFLOP/s/GPU vs the paper's %.0f (%+.1f %%), fits %v", r.Paper.Name, r.Out.TFLOPSPerGPU, r.Paper.TFLOPS, 100*e, r.Out.Fits)
		}
	}
	il, err := PTDPInterleavedRows()
	if err != nil {
		t.Fatal(err)
	}
	prevGap := math.Inf(1)
	for i := 0; i+1 < len(il); i += 2 {
		gap := il[i+1].Out.TFLOPSPerGPU / il[i].Out.TFLOPSPerGPU
		if gap <= 1 || gap > prevGap {
			t.Errorf("batch %d: interleaved / non-interleaved %.3f (previous batch %.3f): want > 1 and shrinking", il[i].Batch, gap, prevGap)
		}
		prevGap = gap
	}
	paper, err := LoadPTDPPaper()
	if err != nil {
		t.Fatal(err)
	}
	tp, err := PTDPTensorPipelineRows()
	if err != nil {
		t.Fatal(err)
	}
	best := map[int]PTDPSweepRow{}
	for _, r := range tp {
		if b, ok := best[r.Batch]; !ok || r.Out.TFLOPSPerGPU > b.Out.TFLOPSPerGPU {
			best[r.Batch] = r
		}
	}
	for B, r := range best {
		if r.Out.Execution.TP != paper.TensorVsPipeline.BestTP {
			t.Errorf("batch %d: best (t, p) %s, the paper t = %d", B, r.Label, paper.TensorVsPipeline.BestTP)
		}
	}
}

// TestMadPipeResults pins MadPipe's headline on PipeDream's profiles:
// MadPipe is never slower than PipeDream + 1F1B* (up to the search's
// 0.1 % and the schedule grid's 0.2 %), schedules every case PipeDream's
// partition does, and its periods are shorter by at least the paper's
// 20 % in geometric mean (Figure 7).
func TestMadPipeResults(t *testing.T) {
	rows, err := MadPipeRows()
	if err != nil {
		t.Fatal(err)
	}
	paper, err := LoadMadPipePaper()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if !math.IsInf(r.PipeDreamSeconds, 1) && (math.IsInf(r.MadPipeSeconds, 1) || r.MadPipeSeconds > 1.01*r.PipeDreamSeconds) {
			t.Errorf("%+v: MadPipe %.4f s, PipeDream + 1F1B* %.4f s", r.Case, r.MadPipeSeconds, r.PipeDreamSeconds)
		}
	}
	gm, _ := MadPipeGeomeans(rows)
	if gm["all"] < paper.Claims.MinGeomeanRatioBelow10GB {
		t.Errorf("geometric mean PipeDream / MadPipe %.3f, the paper's claim >= %.2f", gm["all"], paper.Claims.MinGeomeanRatioBelow10GB)
	}
}

// TestTwoBWResults pins 2BW's Table 1 direction for BERT-48: the planner
// prefers the 8-wide, 8-deep configuration to the 16-wide one whose
// all-reduce crosses servers.
func TestTwoBWResults(t *testing.T) {
	rows, err := TwoBWRows()
	if err != nil {
		t.Fatal(err)
	}
	var w8, w16 *TwoBWRow
	for i, r := range rows {
		if r.Paper.Model == "BERT-48" && r.Paper.W == 8 {
			w8 = &rows[i]
		}
		if r.Paper.Model == "BERT-48" && r.Paper.W == 16 {
			w16 = &rows[i]
		}
	}
	if w8 == nil || w16 == nil || !w8.Found || !w16.Found {
		t.Fatalf("BERT-48 (8, 8) or (16, 4) missing: %+v %+v", w8, w16)
	}
	if w8.Best.Predictions.SamplesPerSecond <= w16.Best.Predictions.SamplesPerSecond {
		t.Errorf("BERT-48: (8, 8) %.0f seq/s not above (16, 4) %.0f", w8.Best.Predictions.SamplesPerSecond, w16.Best.Predictions.SamplesPerSecond)
	}
}

// TestScheduleBubbles pins every closed-form bubble of the registry to the
// simulator: idle over busy time of the first device equals (p−1)/(v·m)
// for the flushing kinds; the kinds without a flush have no bubble in the
// steady state, so over n batches what is left is one fill and drain,
// (p−1)/(n·m).
func TestScheduleBubbles(t *testing.T) {
	rows, err := ScheduleRows()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if !r.HasAnalytic {
			continue
		}
		want := r.Analytic
		if r.Batches > 1 {
			want = float64(r.Stages-1) / float64(r.Batches*r.Microbatches)
		}
		if math.Abs(r.SimulatedIdleOverBusy-want) > 1e-9 {
			t.Errorf("%s p=%d m=%d v=%d batches=%d: simulated %.6f, want %.6f", r.Kind, r.Stages, r.Microbatches, r.Chunks, r.Batches, r.SimulatedIdleOverBusy, want)
		}
	}
}
