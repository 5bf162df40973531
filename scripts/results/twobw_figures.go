package results

import (
	"fmt"
	"strconv"
)

// gpt2BW is a GPT model of the 2BW evaluation (§5: dimensions "similar to
// Megatron's", not given; ours in testdata/twobw_paper.json).
type gpt2BW struct {
	name                  string
	layers, hidden, heads int
}

var (
	gpt13B = gpt2BW{"GPT-1.3B", 24, 2048, 16}
	gpt22B = gpt2BW{"GPT-2.2B", 32, 2304, 24}
)

// v100Args is a transformer command for m at s = 512 on gpus 16-GB V100s in
// p3.16xlarge servers, fp16, global batch batch (the planner's flags follow).
func v100Args(layers, hidden, heads, gpus, batch int) []string {
	return []string{"transformer", "--layers", strconv.Itoa(layers), "--hidden", strconv.Itoa(hidden), "--heads", strconv.Itoa(heads),
		"--seq", "512", "--gpu", "nvidia-v100-sxm2-16gb", "--precision", "fp16", "--gpus", strconv.Itoa(gpus), "--gpus-per-node", "8",
		"--inter-node-bandwidth", p3InterNodeBandwidth, "--batch", strconv.Itoa(batch)}
}

// twoBWFixed is the 2BW planner's command at depth d, microbatch b and recomputation r.
func twoBWFixed(base []string, d, b int, r bool) []string {
	return append(append([]string{}, base...), "--planner", "2bw", "--pp", strconv.Itoa(d), "--microbatch", strconv.Itoa(b),
		"--recompute", recomputeFlag(r))
}

// TwoBWPoint is one evaluated configuration of a figure.
type TwoBWPoint struct {
	Model     string
	D, B      int // depth and microbatch size
	Batch     int // global batch
	Recompute bool
	Args      []string
	Out       planResult
}

// Pipelined reports whether the point fits as a 2BW pipeline (the planner
// falls back to no pipelining, one stage at a time, when it does not).
func (p TwoBWPoint) Pipelined() bool {
	return p.Out.Problem == "" && p.Out.Candidates[0].TwoBW.Execution != "no-pipelining"
}

// SamplesPerSecond is the point's 2BW throughput, 0 when it does not fit pipelined.
func (p TwoBWPoint) SamplesPerSecond() float64 {
	if !p.Pipelined() {
		return 0
	}
	return p.Out.Candidates[0].SamplesPerSecond
}

func (p TwoBWPoint) cell() string {
	switch {
	case p.Out.Problem != "":
		return "does not fit"
	case !p.Pipelined():
		return fmt.Sprintf("does not fit pipelined (no pipelining: %.1f)", p.Out.Candidates[0].SamplesPerSecond)
	}
	return fmt.Sprintf("%.1f", p.SamplesPerSecond())
}

func runPoint(p TwoBWPoint) (TwoBWPoint, error) {
	var err error
	p.Out, err = runPlan(p.Args...)
	return p, err
}

// TwoBWFigure9 is Figure 9: GPT-1.3B on 64 V100s, (d, b) = (4, 8), (8, 16)
// and (8, 32) with recomputation (the largest b the figure shows for d =
// 8 is 32), global batch 2048 to 8192.
func TwoBWFigure9() ([]TwoBWPoint, error) {
	var pts []TwoBWPoint
	for _, db := range [][2]int{{4, 8}, {8, 16}, {8, 32}} {
		for _, B := range []int{2048, 4096, 8192} {
			p, err := runPoint(TwoBWPoint{Model: gpt13B.name, D: db[0], B: db[1], Batch: B, Recompute: true,
				Args: twoBWFixed(v100Args(gpt13B.layers, gpt13B.hidden, gpt13B.heads, 64, B), db[0], db[1], true)})
			if err != nil {
				return nil, err
			}
			pts = append(pts, p)
		}
	}
	return pts, nil
}

// TwoBWFigure10 is Figure 10: (w, d) = (1, 8) on 8 V100s, GPT-1.3B and
// GPT-2.2B, per-GPU microbatch 1 to 64, with and without recomputation,
// global batch 512 (the GPT batch of §5.1).
func TwoBWFigure10() ([]TwoBWPoint, error) {
	var pts []TwoBWPoint
	for _, m := range []gpt2BW{gpt13B, gpt22B} {
		for _, b := range []int{1, 2, 4, 8, 16, 32, 64} {
			for _, r := range []bool{false, true} {
				p, err := runPoint(TwoBWPoint{Model: m.name, D: 8, B: b, Batch: 512, Recompute: r,
					Args: twoBWFixed(v100Args(m.layers, m.hidden, m.heads, 8, 512), 8, b, r)})
				if err != nil {
					return nil, err
				}
				pts = append(pts, p)
			}
		}
	}
	return pts, nil
}

// TwoBWMaxModel is one depth of Figure 11.
type TwoBWMaxModel struct {
	D      int
	Layers int     // the most layers that fit (0: none)
	Params float64 // their parameters
	Args   []string
}

// fig11Hidden is the width of Figure 11's model family (GPT, h = 4096, 32
// heads, s = 512): the paper does not say how it grew its models; we add
// layers.
const fig11Hidden, fig11Heads = 4096, 32

// TwoBWFigure11 is Figure 11: for each depth d, the largest GPT (layers of
// width 4096, at most the request's 256) that 2BW fits on 64 16-GB V100s
// with recomputation at b = 1, found by bisection over the layers.
func TwoBWFigure11() ([]TwoBWMaxModel, error) {
	var out []TwoBWMaxModel
	fits := func(d, layers int) (planResult, []string, bool, error) {
		args := twoBWFixed(v100Args(layers, fig11Hidden, fig11Heads, 64, 512), d, 1, true)
		r, err := runPlan(args...)
		return r, args, err == nil && r.Problem == "", err
	}
	for _, d := range []int{4, 8, 16, 32, 64} {
		row := TwoBWMaxModel{D: d}
		lo, hi := d-1, 256 // lo fits (or is below d), hi+1 does not
		if r, args, ok, err := fits(d, hi); err != nil {
			return nil, err
		} else if ok {
			row.Layers, row.Params, row.Args = hi, r.Params, args
			out = append(out, row)
			continue
		}
		hi--
		for lo < hi {
			mid := (lo + hi + 1) / 2
			_, _, ok, err := fits(d, mid)
			if err != nil {
				return nil, err
			}
			if ok {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		if lo >= d {
			r, args, _, err := fits(d, lo)
			if err != nil {
				return nil, err
			}
			row.Layers, row.Params, row.Args = lo, r.Params, args
		}
		out = append(out, row)
	}
	return out, nil
}

// TwoBWMemoryPoint is one schedule of §5.3's memory comparison.
type TwoBWMemoryPoint struct {
	Schedule string
	B        int
	Args     []string
	Out      planResult
}

// TwoBWMemory is §5.3 / Figure 8a: the worst-case memory of GPipe,
// PipeDream-Flush (1f1b) and 2BW for GPT-2.2B on 8 V100s, (t, p, d) =
// (1, 8, 1), global batch 64, recomputation, microbatch 1 to 8 (the
// figure's microbatch is not given), predicted by the cost model.
func TwoBWMemory() ([]TwoBWMemoryPoint, error) {
	var pts []TwoBWMemoryPoint
	for _, b := range []int{1, 2, 4, 8} {
		for _, s := range []string{"gpipe", "1f1b", "2bw"} {
			args := append(v100Args(gpt22B.layers, gpt22B.hidden, gpt22B.heads, 8, 64), "--tp", "1", "--pp", "8", "--microbatch",
				strconv.Itoa(b), "--interleave", "1", "--recompute", "full", "--schedule", s)
			p := TwoBWMemoryPoint{Schedule: s, B: b, Args: args}
			var err error
			if p.Out, err = runPlan(args...); err != nil {
				return nil, err
			}
			pts = append(pts, p)
		}
	}
	return pts, nil
}

// TwoBWFiguresMarkdown is the section of Figures 9-11 and §5.3.
func TwoBWFiguresMarkdown() (string, error) {
	f9, err := TwoBWFigure9()
	if err != nil {
		return "", err
	}
	var cmds []string
	var tab [][]string
	for i := 0; i < len(f9); i += 3 {
		row := []string{fmt.Sprintf("(%d, %d)", f9[i].D, f9[i].B)}
		for _, p := range f9[i : i+3] {
			cmds = append(cmds, command(p.Args...))
			row = append(row, p.cell())
		}
		tab = append(tab, row)
	}
	s := "Figure 9: GPT-1.3B on 64 V100s, throughput (seq/s) by global batch, with recomputation:\n\n" + codeBlock(cmds) + "\n" +
		table([]string{"(d, b)", "batch 2048", "batch 4096", "batch 8192"}, tab)

	f10, err := TwoBWFigure10()
	if err != nil {
		return "", err
	}
	cmds, tab = nil, nil
	for i := 0; i < len(f10); i += 2 {
		cmds = append(cmds, command(f10[i].Args...), command(f10[i+1].Args...))
		tab = append(tab, []string{f10[i].Model, strconv.Itoa(f10[i].B), f10[i].cell(), f10[i+1].cell()})
	}
	s += "\nFigure 10: (w, d) = (1, 8) on 8 V100s, global batch 512, throughput (seq/s) by microbatch size:\n\n" + codeBlock(cmds) + "\n" +
		table([]string{"model", "b", "without recomputation", "with recomputation"}, tab)

	f11, err := TwoBWFigure11()
	if err != nil {
		return "", err
	}
	cmds, tab = nil, nil
	for _, r := range f11 {
		if r.Args != nil {
			cmds = append(cmds, command(r.Args...))
		}
		tab = append(tab, []string{strconv.Itoa(r.D), strconv.Itoa(r.Layers), fmt.Sprintf("%.1f", r.Params/1e9)})
	}
	s += fmt.Sprintf("\nFigure 11: the largest GPT (h = %d, %d heads, s = 512; layers added up to the request's 256) that fits on 64 16-GB V100s by depth, b = 1, recomputation (the largest that fits is shown):\n\n", fig11Hidden, fig11Heads) +
		codeBlock(cmds) + "\n" + table([]string{"depth d", "layers", "billion parameters"}, tab)

	mem, err := TwoBWMemory()
	if err != nil {
		return "", err
	}
	cmds, tab = nil, nil
	for i := 0; i < len(mem); i += 3 {
		row := []string{strconv.Itoa(mem[i].B), strconv.Itoa(64 / mem[i].B)}
		for _, p := range mem[i : i+3] {
			cmds = append(cmds, command(p.Args...))
			row = append(row, fmt.Sprintf("%.2f", p.Out.Candidates[0].Memory.PeakBytes/(1<<30)))
		}
		tab = append(tab, row)
	}
	s += "\n§5.3 (Figure 8a): worst-case memory per GPU (GiB, the most loaded stage, before the reserve) of GPT-2.2B on 8 V100s, (t, p, d) = (1, 8, 1), batch 64, recomputation:\n\n" +
		codeBlock(cmds) + "\n" + table([]string{"b", "m", "GPipe", "PipeDream-Flush", "2BW"}, tab)
	return s, nil
}
