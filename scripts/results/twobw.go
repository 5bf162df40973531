package results

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"pipeplan/cli"
)

//go:embed testdata/twobw_paper.json
var twobwPaperJSON []byte

// TwoBWPaperRow is one row of 2BW's Table 1.
type TwoBWPaperRow struct {
	Model      string  `json:"model"`
	Layers     int     `json:"layers"`
	Servers    int     `json:"servers"`
	GPU        string  `json:"gpu"` // a gpuprofiles id; "" when pipeplan has no profile of the GPU
	Machine    string  `json:"machine"`
	W          int     `json:"w"`
	D          int     `json:"d"`
	Throughput float64 `json:"throughput"`
	B          int     `json:"b"`
	Recompute  bool    `json:"recompute"`
	Chosen     bool    `json:"chosen"`
}

// TwoBWPaper is the stored table and figure claims with their sources.
type TwoBWPaper struct {
	Source  string          `json:"source"`
	Rows    []TwoBWPaperRow `json:"rows"`
	Figures struct {
		Source               string  `json:"source"`
		RecomputeOverheadCap float64 `json:"recompute_overhead_cap"`
		MaxModelParams       float64 `json:"max_model_params_64_v100"`
	} `json:"figures"`
}

// LoadTwoBWPaper reads testdata/twobw_paper.json.
func LoadTwoBWPaper() (TwoBWPaper, error) {
	var p TwoBWPaper
	err := json.Unmarshal(twobwPaperJSON, &p)
	return p, err
}

// twoBWGlobalBatch is the global batch of the BERT runs (§5.1: "For BERT,
// we use a batch size of 1024"); Table 1 does not give its own.
const twoBWGlobalBatch = 1024

// planResult is what the results read of `pipeplan transformer --json`:
// every planner's candidates, or the problem when nothing fits.
type planResult struct {
	Params     float64         `json:"params"`
	Candidates []planCandidate `json:"candidates"`
	Problem    string          `json:"problem"`
}

// planCandidate is one candidate of a planResult.
type planCandidate struct {
	Execution struct {
		TP             int    `json:"tp"`
		PP             int    `json:"pp"`
		DP             int    `json:"dp"`
		MicrobatchSize int    `json:"microbatch_size"`
		Recompute      string `json:"recompute"`
	} `json:"execution"`
	SamplesPerSecond float64 `json:"samples_per_second"`
	TFLOPSPerGPU     float64 `json:"tflops_per_gpu"`
	Memory           struct {
		PeakBytes float64 `json:"peak_bytes"`
	} `json:"memory"`
	TwoBW *struct {
		Execution string `json:"execution"`
	} `json:"two_bw"`
}

// runPlan runs pipeplan's CLI with args plus --json: a result with
// candidates, or one whose Problem says why there are none (the CLI then
// exits with an error after printing it); any other error is returned.
func runPlan(args ...string) (planResult, error) {
	var buf bytes.Buffer
	err := cli.Run(append(append([]string{}, args...), "--json"), &buf)
	var r planResult
	if jerr := json.Unmarshal(buf.Bytes(), &r); jerr != nil || (err != nil && r.Problem == "") {
		if err == nil {
			err = jerr
		}
		return planResult{}, fmt.Errorf("pipeplan %s: %w", strings.Join(args, " "), err)
	}
	if r.Problem == "" && (len(r.Candidates) == 0 || !(r.Candidates[0].SamplesPerSecond > 0)) {
		return planResult{}, fmt.Errorf("pipeplan %s: no candidate with a prediction", strings.Join(args, " "))
	}
	return r, nil
}

// bertArgs is the 2BW planner's command for BERT with the given layers
// (BERT-Large's width: h = 1024, 16 heads; s = 128, V = 30,522) on servers
// of 8 GPUs (NVLink inside, 25 Gbps between, §5), fp16. A p3.16xlarge has
// one 25 Gbps network for its 8 GPUs, and pipeplan's inter-node bandwidth
// is per GPU: 25e9/8/8 = 390.625 MB/s.
func bertArgs(layers, servers int, gpu string) []string {
	return []string{"transformer", "--planner", "2bw", "--layers", strconv.Itoa(layers), "--hidden", "1024", "--heads", "16",
		"--seq", "128", "--vocab", "30522", "--gpu", gpu, "--precision", "fp16", "--gpus", strconv.Itoa(8 * servers),
		"--gpus-per-node", "8", "--inter-node-bandwidth", p3InterNodeBandwidth, "--batch", strconv.Itoa(twoBWGlobalBatch)}
}

// p3InterNodeBandwidth is a p3.16xlarge's 25 Gbps network shared by its 8
// V100s, per GPU, in bytes/s.
const p3InterNodeBandwidth = "3.90625e8"

// recomputeFlag is the --recompute value of a 2BW execution with or without recomputation.
func recomputeFlag(r bool) string {
	if r {
		return "full"
	}
	return "none"
}

// TwoBWRow is our prediction for one row of Table 1: the paper's (w, d,
// b, r) evaluated by the 2BW planner, or why it cannot be.
type TwoBWRow struct {
	Paper TwoBWPaperRow
	// Args is the command; nil when the row is not planned (Skip says why).
	Args []string
	Skip string
	// Out is the planner's answer at the row's (w, d, b, r); Out.Problem
	// set when it does not fit.
	Out planResult
}

// Fits reports whether the row was planned and fits.
func (r TwoBWRow) Fits() bool { return r.Args != nil && r.Out.Problem == "" }

// SamplesPerSecond is the row's predicted throughput (0 when it does not fit).
func (r TwoBWRow) SamplesPerSecond() float64 {
	if !r.Fits() {
		return 0
	}
	return r.Out.Candidates[0].SamplesPerSecond
}

// TwoBWRows evaluates each row of Table 1 with the 2BW planner's cost
// functions at the row's width, depth, microbatch size and recomputation.
func TwoBWRows() ([]TwoBWRow, error) {
	paper, err := LoadTwoBWPaper()
	if err != nil {
		return nil, err
	}
	var rows []TwoBWRow
	for _, p := range paper.Rows {
		r := TwoBWRow{Paper: p}
		switch {
		case p.GPU == "":
			r.Skip = "no profile of this GPU in gpuprofiles"
		case p.W*p.D != 8*p.Servers:
			r.Skip = fmt.Sprintf("w·d = %d GPUs, the machine has %d (a misprint in the table)", p.W*p.D, 8*p.Servers)
		case p.D > p.Layers:
			r.Skip = fmt.Sprintf("%d stages for %d layer blocks (the paper's blocks are finer than a layer)", p.D, p.Layers)
		}
		if r.Skip == "" {
			r.Args = append(bertArgs(p.Layers, p.Servers, p.GPU), "--pp", strconv.Itoa(p.D), "--microbatch", strconv.Itoa(p.B),
				"--recompute", recomputeFlag(p.Recompute))
			if r.Out, err = runPlan(r.Args...); err != nil {
				return nil, err
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// TwoBWGroups splits the rows by (model, machine), the table's groups,
// in order.
func TwoBWGroups(rows []TwoBWRow) [][]TwoBWRow {
	var groups [][]TwoBWRow
	for i, r := range rows {
		if i == 0 || r.Paper.Model != rows[i-1].Paper.Model || r.Paper.Machine != rows[i-1].Paper.Machine {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], r)
	}
	return groups
}

// ourPick is the index of the fastest fitting row of a group, -1 if none.
func ourPick(g []TwoBWRow) int {
	best := -1
	for i, r := range g {
		if r.Fits() && (best < 0 || r.SamplesPerSecond() > g[best].SamplesPerSecond()) {
			best = i
		}
	}
	return best
}

// TwoBWMarkdown is the Table 1 section: each row's prediction and command,
// whether our pick among a group's rows is the paper's, and what the
// planner picks when nothing is fixed.
func TwoBWMarkdown() (string, error) {
	rows, err := TwoBWRows()
	if err != nil {
		return "", err
	}
	var cmds []string
	var tab [][]string
	tf := map[bool]string{true: "T", false: "F"}
	for _, g := range TwoBWGroups(rows) {
		pick := ourPick(g)
		free := ""
		if g[0].Paper.GPU != "" {
			args := bertArgs(g[0].Paper.Layers, g[0].Paper.Servers, g[0].Paper.GPU)
			out, err := runPlan(args...)
			if err != nil {
				return "", err
			}
			cmds = append(cmds, command(args...))
			if out.Problem != "" {
				free = "nothing fits"
			} else {
				c := out.Candidates[0]
				free = fmt.Sprintf("(%d, %d), b = %d, r = %s", c.Execution.DP, c.Execution.PP, c.Execution.MicrobatchSize, tf[c.Execution.Recompute == "full"])
			}
		}
		for i, r := range g {
			p := r.Paper
			ours := r.Skip
			switch {
			case r.Args != nil && !r.Fits():
				ours = "does not fit"
			case r.Fits():
				ours = fmt.Sprintf("%.0f (%s)", r.SamplesPerSecond(), r.Out.Candidates[0].TwoBW.Execution)
				cmds = append(cmds, command(r.Args...))
			}
			tab = append(tab, []string{p.Model, p.Machine, fmt.Sprintf("(%d, %d)", p.W, p.D), strconv.Itoa(p.B), tf[p.Recompute],
				fmt.Sprintf("%.0f", p.Throughput), map[bool]string{true: "✓"}[p.Chosen], ours, map[bool]string{true: "✓"}[i == pick], free})
			free = ""
		}
	}
	return codeBlock(cmds) + "\n" + table([]string{"model", "machine", "(w, d)", "b", "r", "paper thpt.", "paper's pick",
		"ours seq/s (execution)", "our pick among the rows", "our planner's own choice"}, tab), nil
}
