package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vugu/vugu"

	"pipeplan/core/plan"
)

// column is a table header with a tooltip saying how the value is computed.
type column struct{ Name, Title string }

// candidateHeaders are the ranked candidates table's columns.
var candidateHeaders = []column{
	{"#", "rank by predicted step time"},
	{"t", "tensor-parallel size (§4.2.3)"},
	{"p", "pipeline-parallel size (§4.2.2)"},
	{"d", "data-parallel size; t·p·d = GPUs"},
	{"b", "microbatch size (§4.3.3)"},
	{"v", "model chunks per GPU, interleaved schedule (§4.2.2)"},
	{"m", "microbatches per pipeline and step, m = B/(d·b)"},
	{"schedule", "pipeline schedule"},
	{"recompute", "activation recomputation (Korthikanti et al. 2022)"},
	{"step time", "predicted seconds per step: m·t_max + bubble + data-parallel all-reduce + optimizer (§4.2)"},
	{"samples/s", "global batch / step time"},
	{"TFLOP/s/GPU", "eq. 4.2 FLOPs per step / (GPUs × step time), recomputation included"},
	{"MFU", "model FLOPs utilization: eq. 4.2 FLOPs without recomputation / (GPUs × step time × peak FLOP/s)"},
	{"memory", "peak memory of the most loaded GPU + reserve, against its capacity"},
	{"bubble", "pipeline bubble fraction (p−1)/(v·m) (§4.2.2)"},
}

// infeasibleHeaders are the columns of the configurations that do not fit.
var infeasibleHeaders = []column{
	{"t", "tensor-parallel size"}, {"p", "pipeline-parallel size"}, {"d", "data-parallel size"},
	{"b", "microbatch size"}, {"v", "model chunks per GPU"}, {"recompute", "activation recomputation"},
	{"why infeasible", "peak memory + reserve against the GPU's capacity"},
}

// tableRow is one rendered table row.
type tableRow struct {
	Index    int
	Class    string
	Selected bool
	Cells    []string
}

// kv is one labelled value of the selected plan's summary.
type kv struct{ Key, Value, Title string }

func (c *PlanPage) countText() string {
	r := c.App.Plan.Result
	return fmt.Sprintf("(%d of %d evaluated configurations fit; best %d shown)", r.Feasible, r.Evaluated, len(r.Candidates))
}

func (c *PlanPage) rows() []tableRow {
	r := c.App.Plan.Result
	out := make([]tableRow, len(r.Candidates))
	for i, cand := range r.Candidates {
		row := tableRow{Index: i, Class: "candidate", Selected: i == r.Selected}
		if row.Selected {
			row.Class = "candidate selected"
		}
		row.Cells = []string{
			strconv.Itoa(i + 1), strconv.Itoa(cand.Execution.TP), strconv.Itoa(cand.Execution.PP), strconv.Itoa(cand.Execution.DP),
			strconv.Itoa(cand.Execution.MicrobatchSize), strconv.Itoa(cand.Execution.Interleave), strconv.Itoa(cand.Execution.Microbatches()),
			string(cand.Execution.Schedule), string(cand.Execution.Recompute),
			secs(cand.IterationSeconds), num(cand.SamplesPerSecond), orDash(cand.TFLOPSPerGPU, num), orDash(cand.MFU, pct),
			gib(cand.Memory.PeakBytes+cand.Memory.ReserveBytes) + " / " + gib(cand.Memory.CapacityBytes),
			pct(cand.BubbleFraction),
		}
		out[i] = row
	}
	return out
}

func (c *PlanPage) infeasibleRows() []tableRow {
	var out []tableRow
	for i, cand := range c.App.Plan.Result.Infeasible {
		out = append(out, tableRow{Index: i, Cells: []string{
			strconv.Itoa(cand.Execution.TP), strconv.Itoa(cand.Execution.PP), strconv.Itoa(cand.Execution.DP), strconv.Itoa(cand.Execution.MicrobatchSize),
			strconv.Itoa(cand.Execution.Interleave), string(cand.Execution.Recompute), cand.Reason,
		}})
	}
	return out
}

func (c *PlanPage) summary() []kv {
	r := c.App.Plan.Result
	p := r.Plan
	cand := r.Candidates[r.Selected]
	pr := p.Predictions
	out := []kv{
		{"model", fmt.Sprintf("%s on %d × %s", r.Model, r.GPUs, r.GPU), "the application and the system"},
		{"degrees", fmt.Sprintf("t=%d × p=%d × d=%d, v=%d%s", p.Execution.TP, p.Execution.PP, p.Execution.DP, p.Execution.Interleave, replicas(p.Stages)), "tensor × pipeline × data parallelism (§4.2); PipeDream replicates stages instead (§2.4.1)"},
		{"microbatching", fmt.Sprintf("b=%d, m=%d, B=%d", p.Execution.MicrobatchSize, p.Execution.Microbatches(), p.Execution.GlobalBatch), "m = B/(d·b) microbatches per pipeline (§4.3.3)"},
		{"schedule", string(p.Execution.Schedule) + ", recompute " + string(p.Execution.Recompute), "pipeline schedule and activation recomputation"},
		{"step time", secs(pr.IterationSeconds), "m·t_max + (p−1)/v·t_stage bubble + data-parallel all-reduce + optimizer (§4.2)"},
		{"throughput", num(pr.SamplesPerSecond) + " samples/s", "batch / step time (PipeDream: minibatch / slowest stage's time, §2.4.1)"},
	}
	if pr.TokensPerSecond > 0 {
		out = append(out,
			kv{"tokens", num(pr.TokensPerSecond) + " tokens/s", "samples/s × sequence length"},
			kv{"per GPU", fmt.Sprintf("%s TFLOP/s, MFU %s", num(pr.TFLOPSPerGPU), pct(pr.MFU)), "eq. 4.2 FLOPs / (n × step time); MFU without recomputation against peak"},
			kv{"bubble", pct(cand.BubbleFraction), "(p−1)/(v·m) (§4.2.2)"})
	}
	out = append(out, kv{"peak memory", gib(pr.PeakBytesPerGPU) + " + " + gib(cand.Memory.ReserveBytes) + " reserve of " + gib(r.CapacityBytes),
		"most loaded GPU: weights + gradients + optimizer + activations + buffers, plus the reserve for CUDA context, NCCL and fragmentation"})
	return out
}

// replicas describes replicated stages in PipeDream's notation, e.g.
// "; stage replicas 15-1", or "" when no stage is replicated.
func replicas(stages []plan.Stage) string {
	parts := make([]string, len(stages))
	replicated := false
	for i, s := range stages {
		parts[i] = strconv.Itoa(s.Replicas)
		replicated = replicated || s.Replicas > 1
	}
	if !replicated {
		return ""
	}
	return "; stage replicas " + strings.Join(parts, "-")
}

// legendEntry is one memory-bar legend entry.
type legendEntry struct{ Name, Title string }

func memoryLegend() []legendEntry {
	out := make([]legendEntry, len(memoryParts))
	for i, p := range memoryParts {
		out[i] = legendEntry{p.name, p.how}
	}
	return out
}

func (c *PlanPage) memorySVG() vugu.HTML {
	r := c.App.Plan.Result
	return vugu.HTML(memoryBarsSVG(r.StageMemory, r.CapacityBytes))
}

// stageRows lists, per pipeline device, the layer ranges of its model chunks.
func (c *PlanPage) stageRows() []tableRow {
	r := c.App.Plan.Result
	p := r.Plan
	pp := p.Execution.PP
	ranges := make([][]string, pp)
	for k, s := range p.Stages {
		r := strconv.Itoa(s.FirstLayer)
		if s.LastLayer != s.FirstLayer {
			r += "–" + strconv.Itoa(s.LastLayer)
		}
		ranges[k%pp] = append(ranges[k%pp], r)
	}
	out := make([]tableRow, pp)
	for i := range out {
		peak := ""
		if i < len(p.Predictions.StagePeakBytes) {
			peak = gib(p.Predictions.StagePeakBytes[i])
		}
		out[i] = tableRow{Index: i, Cells: []string{strconv.Itoa(i), strings.Join(ranges[i], ", "), peak}}
	}
	return out
}

// keySelect selects candidate i from the keyboard (Enter or Space on its row).
func (c *PlanPage) keySelect(event vugu.DOMEvent, i int) {
	if k := event.PropString("key"); k == "Enter" || k == " " {
		event.PreventDefault()
		c.App.SelectCandidate(i)
	}
}

// SelectCandidate shows the candidate of rank i in detail.
func (a *App) SelectCandidate(i int) {
	a.SetPlanInput("selected", strconv.Itoa(i))
}

// orDash formats v, or "—" when the planner does not estimate it (0).
func orDash(v float64, format func(float64) string) string {
	if v == 0 {
		return "—"
	}
	return format(v)
}
