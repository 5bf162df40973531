package results

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// PTDPZeroPaperRow is one run of Table 4.2.
type PTDPZeroPaperRow struct {
	Model                 string  `json:"model"`
	Layers, Hidden, Heads int     `json:"-"`
	System                string  `json:"system"` // "ptdp" or "zero3"
	TP, PP                int     `json:"-"`
	GPUs, Batch, B        int     `json:"-"`
	TFLOPS                float64 `json:"tflops"`
}

// UnmarshalJSON reads a row (the integer fields by their lower-case names).
func (r *PTDPZeroPaperRow) UnmarshalJSON(b []byte) error {
	var raw struct {
		Model, System                                 string
		Layers, Hidden, Heads, TP, PP, GPUs, Batch, B int
		TFLOPS                                        float64
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*r = PTDPZeroPaperRow{raw.Model, raw.Layers, raw.Hidden, raw.Heads, raw.System, raw.TP, raw.PP, raw.GPUs, raw.Batch, raw.B, raw.TFLOPS}
	return nil
}

// PTDPZeroRow is our prediction for one run of Table 4.2.
type PTDPZeroRow struct {
	Paper PTDPZeroPaperRow
	Args  []string
	Out   planResult
}

// TFLOPS is our prediction, 0 when it does not fit.
func (r PTDPZeroRow) TFLOPS() float64 {
	if r.Out.Problem != "" {
		return 0
	}
	return r.Out.Candidates[0].TFLOPSPerGPU
}

// PTDPZeroRows evaluates Table 4.2: PTD-P at the model-parallel sizes the
// table gives (interleaving searched), ZeRO-3 as data parallelism with
// ZeRO stage 3 at the table's microbatch size; full recomputation, flash
// attention off (2021).
func PTDPZeroRows() ([]PTDPZeroRow, error) {
	paper, err := LoadPTDPPaper()
	if err != nil {
		return nil, err
	}
	var rows []PTDPZeroRow
	for _, p := range paper.Zero3.Rows {
		args := append(gptArgs(p.Layers, p.Hidden, p.Heads, p.GPUs, p.Batch), "--microbatch", strconv.Itoa(p.B), "--recompute", "full")
		if p.System == "zero3" {
			args = append(args, "--tp", "1", "--pp", "1", "--interleave", "1")
			args[slices.Index(args, "--zero")+1] = "3" // gptArgs pins stage 0
		} else {
			args = append(args, "--tp", strconv.Itoa(p.TP), "--pp", strconv.Itoa(p.PP))
		}
		r := PTDPZeroRow{Paper: p, Args: args}
		if r.Out, err = runPlan(args...); err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// PTDPMicrobatchRows evaluates Figure 4.16's sweep: GPT 91B (our
// dimensions) on 64 A100s, (t, p) = (8, 8), no interleaving, full
// recomputation, b = 1 to 8 at batches 128 and 512.
func PTDPMicrobatchRows() ([]PTDPSweepRow, error) {
	var rows []PTDPSweepRow
	for _, B := range []int{128, 512} {
		for _, b := range []int{1, 2, 4, 8} {
			args := append(gptArgs(72, 10240, 80, 64, B), "--tp", "8", "--pp", "8", "--microbatch", strconv.Itoa(b),
				"--interleave", "1", "--recompute", "full")
			r := PTDPSweepRow{Label: strconv.Itoa(b), Batch: B, Args: args}
			if err := runJSON(&r.Out, args...); err != nil {
				return nil, err
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// PTDPZeroMarkdown is the section of Table 4.2 and Figure 4.16.
func PTDPZeroMarkdown() (string, error) {
	rows, err := PTDPZeroRows()
	if err != nil {
		return "", err
	}
	s := "PTD-P vs ZeRO-3 without model parallelism (Table 4.2):\n\n" + commandTable(rows,
		[]string{"model", "system", "GPUs", "batch", "b", "paper TFLOP/s/GPU", "ours", "error"}, func(r PTDPZeroRow) (string, []string) {
			p := r.Paper
			ours, errPct := "does not fit", "—"
			if t := r.TFLOPS(); t > 0 {
				ours, errPct = fmt.Sprintf("%.1f", t), fmt.Sprintf("%+.0f %%", 100*(t/p.TFLOPS-1))
			}
			sys := "ZeRO-3 (t, p) = (1, 1)"
			if p.System == "ptdp" {
				sys = fmt.Sprintf("PTD-P (t, p) = (%d, %d)", p.TP, p.PP)
			}
			return command(r.Args...), []string{p.Model, sys, strconv.Itoa(p.GPUs), strconv.Itoa(p.Batch), strconv.Itoa(p.B),
				fmt.Sprintf("%.0f", p.TFLOPS), ours, errPct}
		})
	mb, err := PTDPMicrobatchRows()
	if err != nil {
		return "", err
	}
	s += "\nMicrobatch size, GPT 91B (our dimensions) on 64 A100s, (t, p) = (8, 8) (Figure 4.16):\n\n" +
		commandTable(mb, []string{"batch", "b", "TFLOP/s/GPU", "bubble"}, func(r PTDPSweepRow) (string, []string) {
			return command(r.Args...), []string{strconv.Itoa(r.Batch), r.Label, fmt.Sprintf("%.1f", r.Out.TFLOPSPerGPU), fmt.Sprintf("%.3f", r.Out.BubbleFraction)}
		})
	return s, nil
}
