package results

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
)

// ptdpPaperPath is the PTD-P papers' numbers (core/cost's calibration
// tests fit and check the A100 on its Tables 4.1 and 4.2), from this
// package's directory.
const ptdpPaperPath = "../../core/cost/testdata/ptdp_paper.json"

// PTDPPaperRow is one run of dissertation Table 4.1, with the
// configuration the SC'21 scripts ran it in.
type PTDPPaperRow struct {
	Name                  string  `json:"name"`
	Layers, Hidden, Heads int     `json:"-"`
	TP, PP, GPUs, Batch   int     `json:"-"`
	TFLOPS                float64 `json:"tflops"`
	// Microbatch and Interleave (model chunks per device) are the
	// scripts'; DDP their data-parallel implementation: "torch" (PyTorch's
	// DistributedDataParallel, its all-reduce overlapped with the backward)
	// or "local" (Megatron-LM's, after it).
	Microbatch, Interleave int    `json:"-"`
	DDP                    string `json:"ddp"`
}

// UnmarshalJSON reads a row (the integer fields by their lower-case names).
func (r *PTDPPaperRow) UnmarshalJSON(b []byte) error {
	var raw struct {
		Name                                       string
		Layers, Hidden, Heads, TP, PP, GPUs, Batch int
		TFLOPS                                     float64
		Microbatch, Interleave                     int
		DDP                                        string
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw.DDP != "torch" && raw.DDP != "local" {
		return fmt.Errorf("%s: ddp must be torch or local, got %q", raw.Name, raw.DDP)
	}
	*r = PTDPPaperRow{raw.Name, raw.Layers, raw.Hidden, raw.Heads, raw.TP, raw.PP, raw.GPUs, raw.Batch, raw.TFLOPS,
		raw.Microbatch, raw.Interleave, raw.DDP}
	return nil
}

// PTDPPaper is the stored PTD-P data with sources.
type PTDPPaper struct {
	Table41 struct {
		Source string `json:"source"`
		// ConfigurationSource is where each row's microbatch, interleaving
		// and data-parallel implementation come from.
		ConfigurationSource string         `json:"configuration_source"`
		Rows                []PTDPPaperRow `json:"rows"`
	} `json:"table41"`
	Interleaved struct {
		Source string `json:"source"`
	} `json:"interleaved"`
	TensorVsPipeline struct {
		Source string `json:"source"`
		BestTP int    `json:"best_tp"`
	} `json:"tensor_vs_pipeline"`
	Zero3 struct {
		Source string             `json:"source"`
		Rows   []PTDPZeroPaperRow `json:"rows"`
	} `json:"zero3"`
	Microbatch struct {
		Source string `json:"source"`
		BestB  int    `json:"best_b"`
	} `json:"microbatch"`
}

// LoadPTDPPaper reads core/cost/testdata/ptdp_paper.json.
func LoadPTDPPaper() (PTDPPaper, error) {
	var p PTDPPaper
	data, err := os.ReadFile(ptdpPaperPath)
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return p, fmt.Errorf("%s: %w", ptdpPaperPath, err)
	}
	return p, nil
}

// transformerCLIOutput is the best candidate `transformer --json` prints
// (the application layer's result, candidates fastest first).
type transformerCLIOutput struct {
	Execution struct {
		TP             int `json:"tp"`
		PP             int `json:"pp"`
		MicrobatchSize int `json:"microbatch_size"`
		Interleave     int `json:"interleave"`
	} `json:"execution"`
	TFLOPSPerGPU   float64 `json:"tflops_per_gpu"`
	BubbleFraction float64 `json:"bubble_fraction"`
	Fits           bool    `json:"fits"`
	Memory         struct {
		PeakBytes float64 `json:"peak_bytes"`
	} `json:"memory"`
}

// UnmarshalJSON reads the first candidate of the CLI's result; a result
// without one, or one without a prediction, is an error, so a change of
// the CLI's output cannot turn into a table of zeros.
func (o *transformerCLIOutput) UnmarshalJSON(data []byte) error {
	type candidate transformerCLIOutput // without this method
	var r struct {
		Candidates []candidate `json:"candidates"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	if len(r.Candidates) == 0 || !(r.Candidates[0].TFLOPSPerGPU > 0) || r.Candidates[0].Execution.TP < 1 {
		return fmt.Errorf("transformer --json: no candidate with a prediction in %.200s", data)
	}
	*o = transformerCLIOutput(r.Candidates[0])
	return nil
}

// gptArgs is the transformer command for a GPT model of §4.5.1 (s = 2048,
// V = 51,200). The 2021 runs predate FlashAttention (the attention scores
// are materialized), sequence parallelism (Korthikanti et al. 2022), the
// distributed optimizer and the overlapped gradient reduction (their
// data-parallel all-reduce follows the backward, §4.2), so the command
// turns them off; they ran in fp16 with a loss scale (--fp16
// --loss-scale 8192, examples/academic_paper_scripts/sc21/CONFIG.sh in
// NVIDIA/Megatron-LM at commit d086a2e3b020ff78db9d29915f7cfe886e085f13).
func gptArgs(layers, hidden, heads, gpus, batch int) []string {
	return []string{"transformer", "--layers", strconv.Itoa(layers), "--hidden", strconv.Itoa(hidden), "--heads", strconv.Itoa(heads),
		"--gpus", strconv.Itoa(gpus), "--batch", strconv.Itoa(batch), "--precision", "fp16",
		"--flash-attention=false", "--sequence-parallel=false", "--grad-accumulation-fusion=false", "--zero", "0",
		"--overlap-grad-reduce=false", "--overlap-param-gather=false", "--tp-comm-overlap=false"}
}

// PTDPTableRow is our prediction for one Table 4.1 run.
type PTDPTableRow struct {
	Paper PTDPPaperRow
	Args  []string
	Out   transformerCLIOutput
}

// PTDPTableRows evaluates Table 4.1's runs with the paper's (t, p), full
// recomputation and the scripts' microbatch, interleaving and
// data-parallel implementation (PyTorch DDP overlaps the gradient
// all-reduce with the backward).
func PTDPTableRows() ([]PTDPTableRow, error) {
	paper, err := LoadPTDPPaper()
	if err != nil {
		return nil, err
	}
	var rows []PTDPTableRow
	for _, p := range paper.Table41.Rows {
		args := gptArgs(p.Layers, p.Hidden, p.Heads, p.GPUs, p.Batch)
		if p.DDP == "torch" {
			args[slices.Index(args, "--overlap-grad-reduce=false")] = "--overlap-grad-reduce=true"
		}
		args = append(args, "--tp", strconv.Itoa(p.TP), "--pp", strconv.Itoa(p.PP),
			"--microbatch", strconv.Itoa(p.Microbatch), "--interleave", strconv.Itoa(p.Interleave), "--recompute", "full")
		r := PTDPTableRow{Paper: p, Args: args}
		if err := runJSON(&r.Out, args...); err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// PTDPTableMarkdown is the Table 4.1 section.
func PTDPTableMarkdown() (string, error) {
	rows, err := PTDPTableRows()
	if err != nil {
		return "", err
	}
	var ratios []float64 // filled as the table is built, before the geometric mean below
	runs := commandTable(rows, []string{"model", "GPUs", "(t, p)", "batch", "microbatch", "v", "DDP", "paper TFLOP/s/GPU",
		"ours", "error", "memory GiB"}, func(r PTDPTableRow) (string, []string) {
		ratio := r.Out.TFLOPSPerGPU / r.Paper.TFLOPS
		ratios = append(ratios, ratio)
		return command(r.Args...), []string{r.Paper.Name, strconv.Itoa(r.Paper.GPUs), fmt.Sprintf("(%d, %d)", r.Paper.TP, r.Paper.PP),
			strconv.Itoa(r.Paper.Batch), strconv.Itoa(r.Out.Execution.MicrobatchSize), strconv.Itoa(r.Out.Execution.Interleave), r.Paper.DDP,
			fmt.Sprintf("%.0f", r.Paper.TFLOPS),
			fmt.Sprintf("%.1f", r.Out.TFLOPSPerGPU), fmt.Sprintf("%+.1f %%", 100*(ratio-1)),
			fmt.Sprintf("%.1f", r.Out.Memory.PeakBytes/(1<<30))}
	})
	return runs + fmt.Sprintf("\nGeometric mean of ours / paper over the 10 rows: %.3f.\n", geomean(ratios)), nil
}

// PTDPSweepRow is one configuration of a figure sweep.
type PTDPSweepRow struct {
	Label string
	Batch int
	Args  []string
	Out   transformerCLIOutput
}

// PTDPInterleavedRows evaluates GPT-3 175B on 96 GPUs, (t, p) = (8, 12),
// with the interleaved schedule (v = 2) and without (v = 1), at batch sizes
// 12 to 192 (Figure 4.12).
func PTDPInterleavedRows() ([]PTDPSweepRow, error) {
	var rows []PTDPSweepRow
	for _, B := range []int{12, 24, 48, 96, 192} {
		for _, v := range []int{1, 2} {
			args := append(gptArgs(96, 12288, 96, 96, B), "--tp", "8", "--pp", "12", "--microbatch", "1", "--recompute", "full",
				"--interleave", strconv.Itoa(v))
			r := PTDPSweepRow{Label: map[int]string{1: "non-interleaved", 2: "interleaved (v = 2)"}[v], Batch: B, Args: args}
			if err := runJSON(&r.Out, args...); err != nil {
				return nil, err
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// PTDPTensorPipelineRows evaluates GPT 162.2B on 64 GPUs at every (t, p)
// with t·p = 64 (Figure 4.13) as the SC'21 script ran them
// (NVIDIA/Megatron-LM examples/sc21/run_figure_13.sh: MBS 1, no virtual
// pipeline stages, DDP local): microbatch 1, full recomputation, not
// interleaved, tensor parallelism allowed across nodes.
func PTDPTensorPipelineRows() ([]PTDPSweepRow, error) {
	var rows []PTDPSweepRow
	for _, B := range []int{32, 128} {
		for _, t := range []int{2, 4, 8, 16, 32} {
			args := append(gptArgs(32, 20480, 128, 64, B), "--tp", strconv.Itoa(t), "--pp", strconv.Itoa(64/t), "--microbatch", "1",
				"--interleave", "1", "--recompute", "full", "--allow-cross-node-tp")
			r := PTDPSweepRow{Label: fmt.Sprintf("(%d, %d)", t, 64/t), Batch: B, Args: args}
			if err := runJSON(&r.Out, args...); err != nil {
				return nil, err
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// PTDPFiguresMarkdown is the section of the §4.5 figure sweeps.
func PTDPFiguresMarkdown() (string, error) {
	il, err := PTDPInterleavedRows()
	if err != nil {
		return "", err
	}
	tp, err := PTDPTensorPipelineRows()
	if err != nil {
		return "", err
	}
	var cmds []string
	var tab [][]string
	for i := 0; i+1 < len(il); i += 2 {
		cmds = append(cmds, command(il[i].Args...), command(il[i+1].Args...))
		tab = append(tab, []string{strconv.Itoa(il[i].Batch), fmt.Sprintf("%.1f", il[i].Out.TFLOPSPerGPU),
			fmt.Sprintf("%.1f", il[i+1].Out.TFLOPSPerGPU), fmt.Sprintf("%.3f", il[i+1].Out.TFLOPSPerGPU/il[i].Out.TFLOPSPerGPU)})
	}
	s := "Interleaved vs non-interleaved, GPT-3 175B on 96 A100s, (t, p) = (8, 12), b = 1 (Figure 4.12):\n\n" + codeBlock(cmds) + "\n" +
		table([]string{"batch", "non-interleaved TFLOP/s/GPU", "interleaved (v = 2)", "interleaved / non-interleaved"}, tab)
	s += "\nTensor vs pipeline parallelism, GPT 162.2B on 64 A100s, b = 1, not interleaved (Figure 4.13, as run_figure_13.sh ran it):\n\n" +
		commandTable(tp, []string{"(t, p)", "batch", "TFLOP/s/GPU"}, func(r PTDPSweepRow) (string, []string) {
			return command(r.Args...), []string{r.Label, strconv.Itoa(r.Batch), fmt.Sprintf("%.1f", r.Out.TFLOPSPerGPU)}
		})
	return s, nil
}
