package cost

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/gpuprofiles"
)

// loadKorthikanti reads testdata/korthikanti2022.json (ReadKorthikanti):
// its eight Table 5 cases and eight Figure 1 cases.
func loadKorthikanti(t *testing.T) (runs, fig1 []KorthikantiRun) {
	t.Helper()
	data, err := os.ReadFile("testdata/korthikanti2022.json")
	if err != nil {
		t.Fatal(err)
	}
	runs, fig1, err = ReadKorthikanti(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 8 || len(fig1) != 8 {
		t.Fatalf("%d Table 5 cases and %d Figure 1 cases, want 8 and 8", len(runs), len(fig1))
	}
	return runs, fig1
}

// predictKorthikanti is PredictKorthikanti of case r on its GPU profile
// under opt (the default curve, or another for TestA100Fit).
func predictKorthikanti(t *testing.T, r KorthikantiRun, opt Options) Prediction {
	t.Helper()
	g, err := gpuprofiles.ByID(r.GPU)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := PredictKorthikanti(r, g, opt)
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

// Bounds on the Table 5 iteration times: what the model achieves (mean
// absolute error 2.4 %, worst +6.5 %, 1T), with a small margin on the
// worst, nothing tuned on the cases; issue 10's target is 3 % / 6 % (a
// published analytic model, Calculon, reports 3.65 % / 8.87 % with an A100
// description tuned to them). The cases are costed as Megatron-LM ran them
// in 2022: the attention core unfused (its s×s traffic,
// unfusedAttentionSeconds), the column-parallel backward collectives
// behind their GEMMs (plan.Overlap.TPBackward), the weight gradients
// accumulated inside the GEMMs, fp16's loss scaling unscaling the
// gradients before the optimizer step and the gradient buffer divided by d
// before its all-reduce, d = 1 included (optimizerSeconds), the first and
// last of a non-interleaved pipeline's stages exchanging with one
// neighbour (p2pSeconds), the dense GEMMs quantized into waves of 256×128
// tiles on the A100's 108 multiprocessors (waves.go); the A100's sustained
// matmul fraction is fitted on dissertation Table 4.1 (2021) alone
// (TestA100Fit), whose runs are costed as the SC'21 scripts ran them
// (their microbatches, interleaving and PyTorch DDP for the p = 1 rows;
// fp16, synchronous all-reduces, a gradient-accumulation pass).
//
// The waves are what moved this table from 3.7 % / 5.7 % (a rise of 3 %
// per decade of GEMM FLOPs fitted on Table 4.1 at microbatch 1) to 2.4 % /
// 6.5 %: the waves of 22B's and 175B's GEMMs (230–310 GFLOP per GPU) take
// 10 and 9 % longer than their tiles' work, 530B's and 1T's (640–1340) 3 %
// (TestWaveSlowdownKorthikanti), the step a smooth rise could not give. Table
// 4.1 cannot tell the two models apart (fitted on the scripts'
// configurations: mean 3.86 % without waves, 3.96 % with them); the
// held-out tables can: Table 4.2 2.6 % / 5.3 % → 1.5 % / 3.1 %, this table
// 4.7 % / 9.8 % → 2.4 % / 6.5 %. The waves were chosen from NVIDIA's
// description of its GEMMs, not for these numbers, but these numbers are
// what showed they matter (checked 2026-11-29). Other variants, each
// refitted on Table 4.1 with the waves: every row at microbatch 1 with the
// interleaving searched, as the fit ran before — Table 4.1 2.9 % / 7.0 %
// with PyTorch DDP's overlap for the p = 1 rows (4.1 % / 11.7 % without),
// this table 2.1 % / 5.0 %, within both of issue 10's targets, but not how
// the runs ran (the scripts' microbatches are 16 down to 1), so not
// adopted; the scripts' configurations with Megatron-LM's own
// data-parallel reduction for the p = 1 rows against their DDP=torch
// (Table 4.1 2.5 % / 6.9 %, this table 2.3 % / 6.2 %). With PyTorch DDP's
// overlap the four p = 1 rows read +6 to +7 %: their small GEMMs (h 2304 to
// 6144) leave more of the step to memory-bound kernels, which the model
// costs by a proxy (about half of Megatron-LM's kernels counted one by
// one, below).
//
// What is left is 1T (+6.5 %, both recomputations) and, in the same
// direction, Table 4.1's 1T row (−4.8 % in throughput): its 64 stages of
// two layers, the last one's output layer 6 % of a stage and on the
// critical path. The pipeline schedule is not the cause: a flushing
// pipeline's time is m·t_max plus every other stage's time once (predict),
// the lower bound of any schedule over those stage times. Checked on
// 2026-11-28 and not adopted, before the waves:
//   - Megatron-LM's memory-bound kernels counted one by one (apex's
//     LayerNorm, the fused bias-GeLU and bias-dropout-add, the QKV bias
//     add, the context permute, autograd's residual gradient sums: 26h and
//     51h bytes per token forward and backward at t = 8 without sequence
//     parallelism, twice layerSeconds' stored-bytes proxy; 1.3–1.6× with
//     it): the speed-up of selective recomputation + sequence parallelism
//     then exceeded the paper's by 6–7.5 points on 22B, 175B and 530B
//     (bound 3.5): the sequence-parallel path would lack a cost of its own.
//   - Fitting the curve on Table 4.1 and the four full-recomputation cases
//     (the re-split issue 10 allows if documented), the selective ones
//     held out: not worth the held-out data it spends.
//
// The 1T case's interleaving is Calculon's (v 1), as Figure 1's 1T
// activations (non-interleaved) imply and as the SC'21 script ran 1T; its
// bubble is a tenth of its predicted time.
const (
	korthikantiMeanBound  = 0.03
	korthikantiWorstBound = 0.07
	// korthikantiGainBound bounds the error, in percentage points, of the
	// predicted speed-up of sequence parallelism + selective recomputation
	// over full recomputation (the ratio of Table 5's two times): the
	// recomputation model separately from the efficiency calibration.
	korthikantiGainBound = 0.035
)

// TestKorthikantiTable5 predicts the eight cases of Korthikanti et al.
// 2022, Table 5 (22B–1T on 8–512 A100s, full recomputation and sequence
// parallelism + selective recomputation) with their published
// configurations and bounds the error in iteration time: held-out cases,
// nothing fitted on them.
func TestKorthikantiTable5(t *testing.T) {
	runs, _ := loadKorthikanti(t)
	var sum, worst float64
	times := map[string][2]float64{} // per model: predicted and published full/selective ratio
	for _, r := range runs {
		pr := predictKorthikanti(t, r, Options{})
		rel := pr.IterationSeconds/r.PublishedSeconds - 1
		sum += math.Abs(rel)
		worst = math.Max(worst, math.Abs(rel))
		t.Logf("%-28s t%d p%d v%d b%d B%d: predicted %6.2f s, published %6.2f s: %+5.1f%%; hardware TFLOP/s %.0f predicted, %.0f published; peak %.1f GiB",
			r.ID, r.TP, r.PP, r.VP, r.Microbatch, r.GlobalBatch, pr.IterationSeconds, r.PublishedSeconds, 100*rel,
			pr.TFLOPSPerGPU, pr.TFLOPSPerGPU*pr.IterationSeconds/r.PublishedSeconds, pr.Memory.PeakBytes/(1<<30))
		var parts []string
		for _, p := range pr.Time.Parts() {
			if p.Seconds > 0 {
				parts = append(parts, fmt.Sprintf("%s %.2f", p.Name, p.Seconds))
			}
		}
		t.Logf("%-28s breakdown (s): %s", "", strings.Join(parts, ", "))
		if !pr.Memory.Fits() {
			t.Errorf("%s: predicted %.1f GiB + %.1f GiB reserve do not fit in %.0f GiB, but the run was made", r.ID,
				pr.Memory.PeakBytes/(1<<30), pr.Memory.ReserveBytes/(1<<30), pr.Memory.CapacityBytes/(1<<30))
		}
		key := strings.TrimSuffix(r.ID, "-"+r.Recompute)
		v := times[key]
		if r.Recompute == string(model.RecomputeFull) {
			v[0], v[1] = v[0]+pr.IterationSeconds, v[1]+r.PublishedSeconds
		} else {
			v[0], v[1] = v[0]/pr.IterationSeconds, v[1]/r.PublishedSeconds
		}
		times[key] = v
	}
	mean := sum / float64(len(runs))
	t.Logf("mean absolute error %.1f%%, worst %.1f%% (issue 10's target: 3%% and 6%%)", 100*mean, 100*worst)
	if mean > korthikantiMeanBound || worst > korthikantiWorstBound {
		t.Errorf("mean absolute error %.1f%%, worst %.1f%%: beyond %.0f%% / %.0f%%", 100*mean, 100*worst, 100*korthikantiMeanBound, 100*korthikantiWorstBound)
	}
	if len(times) != 4 {
		t.Fatalf("%d models with both cases, want 4", len(times))
	}
	for m, v := range times {
		predGain, pubGain := v[0]-1, v[1]-1
		t.Logf("%s: selective + sequence parallel over full recomputation: %+.1f%% predicted, %+.1f%% published", m, 100*predGain, 100*pubGain)
		if math.Abs(predGain-pubGain) > korthikantiGainBound {
			t.Errorf("%s: predicted speed-up %+.1f%%, published %+.1f%%: beyond %.0f points", m, 100*predGain, 100*pubGain, 100*korthikantiGainBound)
		}
	}
}

// TestKorthikantiFigure1Memory checks the per-GPU memory of Korthikanti et
// al. 2022, Figure 1, within 10 %: the first pipeline stage's activations
// (the most microbatches in flight), and the parameters and optimizer
// state of a stage holding transformer layers only — Figure 1 counts 18 B
// × 12Lh²/(t·p), no embedding, which the first stage also holds (+9 % for
// 530B, +11 % for 1T; logged). It also requires the model's verdict on
// fitting an 80 GB A100 to match the published totals': the baseline
// (tensor parallelism only, no recomputation) does not fit for any model,
// the present work does.
func TestKorthikantiFigure1Memory(t *testing.T) {
	_, fig := loadKorthikanti(t)
	const gib = 1 << 30
	for _, r := range fig {
		pr := predictKorthikanti(t, r, Options{})
		first := pr.StageMemory[0]
		layersOnly := first
		if r.PP > 1 {
			layersOnly = pr.StageMemory[1]
		}
		po := (layersOnly.WeightBytes + layersOnly.GradientBytes + layersOnly.OptimizerBytes) / gib
		firstPO := (first.WeightBytes + first.GradientBytes + first.OptimizerBytes) / gib
		act := first.ActivationBytes / gib
		relPO, relAct := po/r.PublishedPOGiB-1, act/r.PublishedActGiB-1
		t.Logf("%-30s parameters+optimizer %.2f GiB (first stage %.2f) vs %.2f: %+.1f%%; activations %.2f vs %.2f GiB: %+.1f%%",
			r.ID, po, firstPO, r.PublishedPOGiB, 100*relPO, act, r.PublishedActGiB, 100*relAct)
		if math.Abs(relPO) > 0.10 || math.Abs(relAct) > 0.10 {
			t.Errorf("%s: parameters+optimizer %+.1f%%, activations %+.1f%% from Figure 1: beyond 10%%", r.ID, 100*relPO, 100*relAct)
		}
		published := (r.PublishedPOGiB + r.PublishedActGiB) * gib
		if pubFits := published+pr.Memory.ReserveBytes <= pr.Memory.CapacityBytes; pubFits != pr.Memory.Fits() {
			t.Errorf("%s: predicted peak %.1f GiB fits: %v; Figure 1's %.1f GiB fits: %v", r.ID, pr.Memory.PeakBytes/gib, pr.Memory.Fits(), published/gib, pubFits)
		}
	}
}
