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
	// The paper's t is the best, or within 1 % of it (the model's
	// resolution).
	best, paperT := map[int]PTDPSweepRow{}, map[int]PTDPSweepRow{}
	for _, r := range tp {
		if b, ok := best[r.Batch]; !ok || r.Out.TFLOPSPerGPU > b.Out.TFLOPSPerGPU {
			best[r.Batch] = r
		}
		if r.Out.Execution.TP == paper.TensorVsPipeline.BestTP {
			paperT[r.Batch] = r
		}
	}
	for B, r := range best {
		if p, ok := paperT[B]; !ok || p.Out.TFLOPSPerGPU < 0.99*r.Out.TFLOPSPerGPU {
			t.Errorf("batch %d: best (t, p) %s, the paper's t = %d more than 1 %% behind it (%+v)", B, r.Label, paper.TensorVsPipeline.BestTP, p.Out)
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

// TestTwoBWResults pins Table 1's two claims of §4.2: for BERT-48 on
// eight 8-V100 servers the 8-wide (8, 8) beats the 16-wide (16, 4), whose
// all-reduce crosses servers; for BERT-192 the planner picks the 4-wide
// (4, 16) over (2, 32). Our pick among each group's rows must be the
// paper's for both.
func TestTwoBWResults(t *testing.T) {
	rows, err := TwoBWRows()
	if err != nil {
		t.Fatal(err)
	}
	pinned := map[string]bool{"BERT-48": false, "BERT-192": false}
	for _, g := range TwoBWGroups(rows) {
		if _, ok := pinned[g[0].Paper.Model]; !ok {
			continue
		}
		pinned[g[0].Paper.Model] = true
		pick := ourPick(g)
		if pick < 0 || !g[pick].Paper.Chosen {
			for _, r := range g {
				t.Logf("%s (%d, %d): %.0f seq/s, fits %v", r.Paper.Model, r.Paper.W, r.Paper.D, r.SamplesPerSecond(), r.Fits())
			}
			t.Errorf("%s: our pick among Table 1's rows is not the paper's", g[0].Paper.Model)
		}
	}
	for m, seen := range pinned {
		if !seen {
			t.Errorf("%s: no rows in testdata", m)
		}
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

// TestTwoBWFigureResults pins the directions of 2BW's Figures 9–11 and
// §5.3 that reproduce: Figure 9, throughput of the d = 4 configuration
// rising with the global batch and b = 32 no slower than b = 16 at d = 8;
// Figure 10, recomputation's cost at a given b at most the paper's cap of
// 33 % and larger microbatches fitting with it; Figure 11, the largest
// model growing with depth, within 1.5× of the paper's "almost 30 billion"
// at the deepest; §5.3, 2BW and GPipe above PipeDream-Flush.
func TestTwoBWFigureResults(t *testing.T) {
	paper, err := LoadTwoBWPaper()
	if err != nil {
		t.Fatal(err)
	}
	f9, err := TwoBWFigure9()
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range f9 {
		if p.SamplesPerSecond() <= 0 {
			t.Errorf("Figure 9 (%d, %d) batch %d does not fit pipelined", p.D, p.B, p.Batch)
		}
		if p.D == 4 && i > 0 && f9[i-1].D == 4 && p.SamplesPerSecond() < f9[i-1].SamplesPerSecond() {
			t.Errorf("Figure 9 d = 4: batch %d %.1f seq/s below batch %d's %.1f", p.Batch, p.SamplesPerSecond(), f9[i-1].Batch, f9[i-1].SamplesPerSecond())
		}
	}
	if f9[1].SamplesPerSecond() <= f9[0].SamplesPerSecond() {
		t.Errorf("Figure 9 d = 4: no gain from batch 2048 to 4096 (%.1f, %.1f)", f9[0].SamplesPerSecond(), f9[1].SamplesPerSecond())
	}
	for i := 3; i < 6; i++ {
		if f9[i+3].SamplesPerSecond() < f9[i].SamplesPerSecond() {
			t.Errorf("Figure 9 batch %d: (8, 32) %.1f below (8, 16) %.1f", f9[i].Batch, f9[i+3].SamplesPerSecond(), f9[i].SamplesPerSecond())
		}
	}
	f10, err := TwoBWFigure10()
	if err != nil {
		t.Fatal(err)
	}
	maxB := map[string]map[bool]int{}
	for i := 0; i < len(f10); i += 2 {
		plain, rec := f10[i], f10[i+1]
		if maxB[plain.Model] == nil {
			maxB[plain.Model] = map[bool]int{}
		}
		for _, p := range []TwoBWPoint{plain, rec} {
			if p.SamplesPerSecond() > 0 {
				maxB[p.Model][p.Recompute] = p.B
			}
		}
		if plain.SamplesPerSecond() > 0 && rec.SamplesPerSecond() > 0 {
			if cost := 1 - rec.SamplesPerSecond()/plain.SamplesPerSecond(); cost < 0 || cost > paper.Figures.RecomputeOverheadCap+1e-9 {
				t.Errorf("Figure 10 %s b = %d: recomputation costs %.1f %%, want in [0, 33.3 %%]", plain.Model, plain.B, 100*cost)
			}
		}
	}
	for m, b := range maxB {
		if b[true] <= b[false] {
			t.Errorf("Figure 10 %s: largest b with recomputation %d, without %d: want larger", m, b[true], b[false])
		}
	}
	f11, err := TwoBWFigure11()
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(f11); i++ {
		if f11[i].Params <= f11[i-1].Params {
			t.Errorf("Figure 11: depth %d fits %.1fB, depth %d %.1fB: want growth", f11[i].D, f11[i].Params/1e9, f11[i-1].D, f11[i-1].Params/1e9)
		}
	}
	if got, want := f11[len(f11)-1].Params, paper.Figures.MaxModelParams; got < want/1.5 || got > 1.5*want {
		t.Errorf("Figure 11: %.1fB at depth %d, the paper almost %.0fB", got/1e9, f11[len(f11)-1].D, want/1e9)
	}
	mem, err := TwoBWMemory()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(mem); i += 3 {
		peak := func(j int) float64 { return mem[i+j].Out.Candidates[0].Memory.PeakBytes }
		if gpipe, flush, twobw := peak(0), peak(1), peak(2); !(twobw > flush && gpipe > flush) {
			t.Errorf("§5.3 b = %d: GPipe %.3g, PipeDream-Flush %.3g, 2BW %.3g bytes: want 2BW and GPipe above Flush", mem[i].B, gpipe, flush, twobw)
		}
	}
}

// TestPTDPZeroResults pins Table 4.2's direction where the model can
// speak to it: PTD-P's lead over ZeRO-3 grows with the GPUs at a fixed
// batch (the paper: 1.06× to 3.2× for 175B); PTD-P's rows are within 10 %
// of the paper's. That PTD-P leads at every count is not asserted: the
// paper's ZeRO-3 is DeepSpeed 0.3's, which gathered at about 21 GB/s per
// GPU even inside a server (DeepSpeed issue 1174), where the model's
// ZeRO-3 gathers over every NIC of a server as NCCL does, and so beats
// PTD-P on the fewest GPUs (RESULTS.md). Figure 4.16: the larger batch is
// faster at every b.
func TestPTDPZeroResults(t *testing.T) {
	rows, err := PTDPZeroRows()
	if err != nil {
		t.Fatal(err)
	}
	zero := map[string][]PTDPZeroRow{}
	ptdp := map[string][]PTDPZeroRow{}
	for _, r := range rows {
		if r.Paper.System == "zero3" {
			zero[r.Paper.Model] = append(zero[r.Paper.Model], r)
			continue
		}
		ptdp[r.Paper.Model] = append(ptdp[r.Paper.Model], r)
		if e := r.TFLOPS()/r.Paper.TFLOPS - 1; math.Abs(e) > 0.10 {
			t.Errorf("PTD-P %s on %d GPUs: %.1f TFLOP/s/GPU vs the paper's %.0f", r.Paper.Model, r.Paper.GPUs, r.TFLOPS(), r.Paper.TFLOPS)
		}
	}
	for m, zs := range zero {
		prev := 0.0
		for i, z := range zs {
			p := ptdp[m][i]
			if z.TFLOPS() <= 0 {
				if m != "530B" || z.Paper.GPUs != 640 {
					t.Errorf("ZeRO-3 %s on %d GPUs does not fit", m, z.Paper.GPUs)
				}
				// Known: our ZeRO-3 holds two whole layers gathered
				// (cost.ZeRO3GatheredLayers, FSDP's block granularity);
				// DeepSpeed, which the paper ran, gathers module by module.
				t.Logf("ZeRO-3 %s on %d GPUs does not fit (two whole 530B layers gathered at t = 1; RESULTS.md)", m, z.Paper.GPUs)
				continue
			}
			gap := p.TFLOPS() / z.TFLOPS()
			if gap <= prev {
				t.Errorf("%s, %d GPUs: PTD-P / ZeRO-3 = %.2f (previous %.2f): want it growing", m, z.Paper.GPUs, gap, prev)
			}
			t.Logf("%s, %d GPUs: PTD-P / ZeRO-3 = %.2f (the paper's %.2f)", m, z.Paper.GPUs, gap, p.Paper.TFLOPS/z.Paper.TFLOPS)
			prev = gap
		}
	}
	mb, err := PTDPMicrobatchRows()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(mb)/2; i++ {
		if small, large := mb[i], mb[i+len(mb)/2]; large.Out.TFLOPSPerGPU <= small.Out.TFLOPSPerGPU {
			t.Errorf("Figure 4.16 b = %s: batch %d %.1f not above batch %d %.1f", small.Label, large.Batch, large.Out.TFLOPSPerGPU, small.Batch, small.Out.TFLOPSPerGPU)
		}
	}
}
