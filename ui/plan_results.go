package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vugu/vugu"

	"pipeplan/app"
	"pipeplan/core/cost"
	"pipeplan/core/plan"
)

// column is a table header with a tooltip saying how the value is computed.
type column struct{ Name, Title string }

// candidateHeaders are the ranked candidates table's columns. Every row
// answers the same question: one step of the page's global batch.
var candidateHeaders = []column{
	{"#", "rank by predicted throughput at the page's global batch"},
	{"t", "tensor-parallel size (§4.2.3)"},
	{"p", "pipeline-parallel size (§4.2.2)"},
	{"cp", "context-parallel size: the sequence split over GPUs, K/V exchanged around the ring (1 = none)"},
	{"ep", "expert-parallel size of MoE layers, drawn from the t·cp·d GPUs of a stage (1 = none); \"etp n\": each expert split over n of them"},
	{"d", "data-parallel size, t·p·cp·d = GPUs; PipeDream replicates each stage instead (§2.4.1): its replicas per stage, e.g. 15-1"},
	{"b", "microbatch size (§4.3.3)"},
	{"v", "model chunks per GPU, interleaved schedule (§4.2.2)"},
	{"m", "microbatches per pipeline and step, m = B/(d·b); PipeDream: inputs in flight (NOAM, §2.3.2)"},
	{"schedule", "pipeline schedule"},
	{"recompute", "activation recomputation (Korthikanti et al. 2022)"},
	{"ZeRO", "ZeRO stage over the d·cp replicas: 0 none, 1 optimizer state (Megatron-LM's distributed optimizer), 2 + gradients, 3 + weights (FSDP)"},
	{"step time", "predicted seconds per step of the global batch B: m·t_max + bubble + data-parallel all-reduce + optimizer (§4.2); PipeDream never flushes: B / its throughput"},
	{"samples/s", "global batch / step time"},
	{"model TFLOP/s/GPU", "model FLOPs per step (eq. 4.2 without recomputation) / (GPUs × step time): the basis of MFU"},
	{"hardware TFLOP/s/GPU", "FLOPs executed per step (eq. 4.2, recomputation included) / (GPUs × step time)"},
	{"MFU", "model FLOPs utilization: model TFLOP/s / the GPU's peak TFLOP/s"},
	{"memory", "peak memory of the most loaded GPU + reserve, against its capacity"},
	{"bubble", bubbleHow},
}

// infeasibleHeaders are the columns of the configurations that do not fit.
var infeasibleHeaders = []column{
	{"planner", "the planner that proposed it"},
	{"t", "tensor-parallel size"}, {"p", "pipeline-parallel size"}, {"cp", "context-parallel size"}, {"ep", "expert-parallel size (etp n: each expert split over n GPUs)"},
	{"d", "data-parallel size, or PipeDream's replicas per stage"},
	{"b", "microbatch size"}, {"v", "model chunks per GPU"}, {"recompute", "activation recomputation"}, {"ZeRO", "ZeRO stage"},
	{"why ruled out", "peak memory + reserve against the GPU's capacity, or a global batch the configuration cannot run"},
}

// tableRow is one rendered table row.
type tableRow struct {
	Index    int
	Class    string
	Selected bool
	// TabIndex is "0" for the one row the Tab key reaches, "-1" for the rest.
	TabIndex string
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
		row := tableRow{Index: i, Class: "candidate", Selected: i == r.Selected, TabIndex: "-1"}
		if row.Selected {
			row.Class, row.TabIndex = "candidate selected", "0"
		}
		row.Cells = []string{
			strconv.Itoa(i + 1), strconv.Itoa(cand.Execution.TP), strconv.Itoa(cand.Execution.PP),
			degree(cand.Execution.CP), expertDegree(cand.Execution), dataParallel(cand),
			strconv.Itoa(cand.Execution.MicrobatchSize), strconv.Itoa(cand.Execution.Interleave), strconv.Itoa(cand.Microbatches),
			string(cand.Execution.Schedule), cand.Execution.RecomputeText(), strconv.Itoa(cand.Execution.ZeRO),
			secs(cand.IterationSeconds), num(cand.SamplesPerSecond),
			orDash(cand.ModelTFLOPSPerGPU, num), orDash(cand.TFLOPSPerGPU, num), orDash(cand.MFU, pct),
			gib(cand.Memory.PeakBytes+cand.Memory.ReserveBytes) + " / " + gib(cand.Memory.CapacityBytes),
			pct(bubbleShare(cand)),
		}
		out[i] = row
	}
	return out
}

func (c *PlanPage) infeasibleRows() []tableRow {
	var out []tableRow
	for i, cand := range c.App.Plan.Result.Infeasible { // app lists only what is ruled out, with why
		out = append(out, tableRow{Index: i, Cells: []string{
			cand.Planner, strconv.Itoa(cand.Execution.TP), strconv.Itoa(cand.Execution.PP), degree(cand.Execution.CP), expertDegree(cand.Execution),
			dataParallel(cand), strconv.Itoa(cand.Execution.MicrobatchSize), strconv.Itoa(cand.Execution.Interleave),
			cand.Execution.RecomputeText(), strconv.Itoa(cand.Execution.ZeRO), cand.Reason,
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
		{"degrees", fmt.Sprintf("t=%d × p=%d × cp=%s × d=%s, ep=%s, v=%d, ZeRO %d", cand.Execution.TP, cand.Execution.PP, degree(cand.Execution.CP), dataParallel(cand),
			expertDegree(cand.Execution), cand.Execution.Interleave, cand.Execution.ZeRO),
			"tensor × pipeline × context × data parallelism (§4.2), expert parallelism within a stage's GPUs, ZeRO stage over the d·cp replicas; PipeDream replicates each stage instead (§2.4.1): d lists its replicas per stage"},
	}
	if tr := r.Transformer; tr != nil && tr.MTPLayers > 0 {
		out = append(out, kv{"multi-token prediction", fmt.Sprintf("%d module(s), %.1f B parameters, on the last stage", tr.MTPLayers, tr.MTPParams()/1e9),
			"each module a layer like the model's last, a 2h-to-h projection and its own pass through the output layer (DeepSeek-V3 §2.2), costed on the last pipeline stage, which gives up layers for them; set Multi-token prediction modules to 0 to plan without"})
	}
	if cand.Execution.CP > 1 {
		out = append(out, kv{"context parallelism", cpCommName(cand.Execution.CPComm),
			"how the cp GPUs of a sequence exchange keys and values (Megatron-Core --cp-comm-type): the ring hides behind the attention where it can; the all-gather and the all-to-alls are exposed in full (see the breakdown)"})
	}
	out = append(out, []kv{
		{"microbatching", fmt.Sprintf("b=%d, m=%d, B=%d", cand.Execution.MicrobatchSize, cand.Microbatches, cand.GlobalBatch), "m = B/(d·b) microbatches per pipeline (§4.3.3); PipeDream: inputs in flight (NOAM, §2.3.2)"},
		{"schedule", string(p.Execution.Schedule) + ", recompute " + p.Execution.RecomputeText(), "pipeline schedule and activation recomputation"},
		{"step time", secs(cand.IterationSeconds), "one step of the global batch B: m·t_max + (p−1)/v·t_stage bubble + data-parallel all-reduce + optimizer (§4.2); PipeDream never flushes: B / its throughput"},
		{"throughput", num(cand.SamplesPerSecond) + " samples/s", "B / step time"},
		{"bubble", pct(bubbleShare(cand)), fmt.Sprintf("%s; here f = %s", bubbleHow, pct(cand.BubbleFraction))},
	}...)
	if pr.TokensPerSecond > 0 {
		out = append(out,
			kv{"tokens", num(pr.TokensPerSecond) + " tokens/s", "samples/s × sequence length"},
			kv{"per GPU", fmt.Sprintf("model %s TFLOP/s, hardware %s TFLOP/s, MFU %s", orDash(cand.ModelTFLOPSPerGPU, num), num(cand.TFLOPSPerGPU), pct(cand.MFU)),
				"model: eq. 4.2 FLOPs without recomputation / (n × step time), the basis of MFU; hardware: the FLOPs executed, recomputation included; MFU: model TFLOP/s / peak"})
	}
	out = append(out, kv{"peak memory", gib(pr.PeakBytesPerGPU) + " + " + gib(cand.Memory.ReserveBytes) + " reserve of " + gib(r.CapacityBytes),
		"most loaded GPU: weights + gradients + optimizer + activations + buffers, plus the reserve for CUDA context, NCCL and fragmentation"})
	return out
}

// degree shows a context- or expert-parallel size; the planners that have
// none (PipeDream, 2BW, MadPipe) leave it 0, which is 1.
func degree(n int) string { return strconv.Itoa(max(n, 1)) }

// expertDegree is an execution's expert-parallel size, with its expert
// tensor parallelism where each expert is split ("8, etp 4").
func expertDegree(e plan.Execution) string {
	if etp := e.ExpertTP(); e.EP > 1 && etp > 1 || e.ETP > 0 && e.ETP != e.TP {
		return fmt.Sprintf("%s, etp %d", degree(e.EP), etp)
	}
	return degree(e.EP)
}

// dataParallel is a candidate's replication as the row and the summary
// both show it: d, or PipeDream's replicas per stage in its notation (15-1).
func dataParallel(c app.Candidate) string {
	if len(c.StageReplicas) == 0 {
		return strconv.Itoa(c.Execution.DP)
	}
	parts := make([]string, len(c.StageReplicas))
	for i, r := range c.StageReplicas {
		parts[i] = strconv.Itoa(r)
	}
	return strings.Join(parts, "-")
}

// bubbleHow says what every "bubble" on the page is (the table, the
// summary, the comparison and the CSV show bubbleShare), with the paper's
// formula.
const bubbleHow = "idle share of the step in pipeline fill and drain: the pipeline bubble's seconds / the step time (the step-time bar's part), " +
	"or f/(1+f) for a planner without a breakdown; the paper's bubble fraction f = (p−1)/(v·m) is bubble time over ideal time (§4.2.2)"

// bubbleShare is the share of a candidate's step spent idle in the
// pipeline's fill and drain: the breakdown's bubble seconds over the step
// time where the planner has a breakdown (PTD-P), else f/(1+f) from the
// paper's bubble fraction f (bubble time over ideal time, §4.2.2). It stays
// below 100 % where f does not.
func bubbleShare(c app.Candidate) float64 {
	if b := c.Breakdown; b != nil && c.IterationSeconds > 0 {
		return b.BubbleSeconds / c.IterationSeconds
	}
	return c.BubbleFraction / (1 + c.BubbleFraction)
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
	m := &c.App.charts
	if len(r.StageMemory) == 0 {
		return ""
	}
	if key := (memoryKey{&r.StageMemory[0], len(r.StageMemory), r.CapacityBytes}); m.memoryOf != key {
		m.memoryOf, m.memory = key, vugu.HTML(memoryBarsSVG(r.StageMemory, r.CapacityBytes))
	}
	return m.memory
}

// charts keeps the Plan page's charts drawn for the result on screen: the
// page re-renders on every input change and progress message, and drawing
// them anew each time took ~100 ms of a render in wasm. A result's slices
// and pointers are its own (each answer is decoded afresh), so they
// identify it.
type charts struct {
	memoryOf    memoryKey
	memory      vugu.HTML
	breakdownOf *cost.TimeBreakdown
	breakdown   vugu.HTML
	schedulesOf *app.ScheduleOption
	schedules   vugu.HTML
}

// memoryKey identifies the per-stage memories a memory chart drew.
type memoryKey struct {
	first         *cost.Memory
	stages        int
	capacityBytes float64
}

// memoryHeaders are the per-rank memory table's columns: the stage, each
// memory part (memoryParts, with how it is computed), the total and the
// capacity.
func memoryHeaders() []column {
	out := []column{{"stage", "pipeline stage: every GPU of a stage holds the same"}}
	for _, p := range memoryParts {
		out = append(out, column{p.name, p.how})
	}
	return append(out, column{"total", "the sum: what the GPU needs"}, column{"of capacity", "total / the GPU's memory"})
}

// memoryRows are the per-rank memory table's rows, in GiB: one per
// pipeline stage (the ranks of a stage hold the same).
func (c *PlanPage) memoryRows() []tableRow {
	r := c.App.Plan.Result
	out := make([]tableRow, len(r.StageMemory))
	for i, m := range r.StageMemory {
		cells := []string{strconv.Itoa(m.Stage)}
		for _, p := range memoryParts {
			cells = append(cells, gib(p.bytes(m)))
		}
		total := m.PeakBytes + m.ReserveBytes
		out[i] = tableRow{Index: i, Cells: append(cells, gib(total), pct(total/r.CapacityBytes))}
		if total > r.CapacityBytes {
			out[i].Class = "rejected"
		}
	}
	return out
}

// stageRows lists, per pipeline device, the layer ranges of its model chunks.
func (c *PlanPage) stageRows() []tableRow {
	r := c.App.Plan.Result
	p := r.Plan
	pp := p.Execution.PP
	kind, _ := p.Execution.Schedule.Info() // a plan the app made: a known kind
	ranges := make([][]string, pp)
	for k, s := range p.Stages {
		r := strconv.Itoa(s.FirstLayer)
		switch {
		case s.Empty() && k == 0:
			r = "embedding"
		case s.Empty():
			r = "output layer"
		case s.LastLayer != s.FirstLayer:
			r += "–" + strconv.Itoa(s.LastLayer)
		}
		d := kind.ChunkDevice(k, pp)
		ranges[d] = append(ranges[d], r)
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

// keySelect selects candidates from the keyboard: Enter or Space selects
// row i, the arrow keys, Home and End move the selection (the table is one
// Tab stop).
func (c *PlanPage) keySelect(event vugu.DOMEvent, i int) {
	n := len(c.App.Plan.Result.Candidates)
	next := i
	switch event.PropString("key") {
	case "Enter", " ":
	case "ArrowDown":
		next = min(i+1, n-1)
	case "ArrowUp":
		next = max(i-1, 0)
	case "Home":
		next = 0
	case "End":
		next = n - 1
	default:
		return
	}
	event.PreventDefault()
	c.App.SelectCandidate(next)
	c.App.focusRow = "cand-row-" + strconv.Itoa(next)
}

// Rendered keeps the keyboard focus on the row the arrow keys selected:
// the re-plan re-renders the table (twice, as it starts and ends), so the
// focus is set after each render until the plan is in.
func (c *PlanPage) Rendered() {
	if id := c.App.focusRow; id != "" {
		c.App.browser.Focus(id)
		if !c.App.Plan.Running {
			c.App.focusRow = ""
		}
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

// cpCommName names a context-parallel communication type as the Plan
// page's select does ("" is the ring).
func cpCommName(comm string) string {
	if comm == "" {
		comm = plan.CPCommP2P
	}
	return choiceNames[comm]
}

// hasLaunch reports whether the selected plan has launch artifacts.
func (c *PlanPage) hasLaunch() bool {
	_, ok := c.App.Launch()
	return ok
}

// launch is the launch artifact the page shows.
func (c *PlanPage) launch() app.LaunchArtifact {
	l, _ := c.App.Launch()
	return l
}
