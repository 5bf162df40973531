package ui

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
	"strings"

	"pipeplan/app"
	"pipeplan/app/request"
	"pipeplan/core/cost"
)

// pinned is a candidate kept for comparison with the selected one.
type pinned struct {
	// Label names the model and cluster it was planned for.
	Label string
	// Cand is the candidate as planned; GPUs its cluster's size.
	Cand app.Candidate
	GPUs int
}

// PinCandidate keeps the selected candidate to compare others with it.
func (a *App) PinCandidate() {
	r := a.Plan.Result
	if len(r.Candidates) == 0 {
		return
	}
	a.pinned = &pinned{Label: fmt.Sprintf("%s on %d × %s", r.Model, r.GPUs, r.GPU), Cand: r.Candidates[r.Selected], GPUs: r.GPUs}
}

// Unpin drops the pinned candidate.
func (a *App) Unpin() { a.pinned = nil }

// comparison is the side-by-side table of the pinned and the selected candidate.
type comparison struct {
	Pinned, Selected string
	Rows             []kv // Key: the quantity; Value: pinned; Title: selected
}

// compare is the pinned candidate against the selected one, or nil when
// nothing is pinned.
func (c *PlanPage) compare() *comparison {
	p := c.App.pinned
	r := c.App.Plan.Result
	if p == nil || len(r.Candidates) == 0 {
		return nil
	}
	sel := r.Candidates[r.Selected]
	price := c.App.price()
	dollarsPerMillion := func(cand app.Candidate, gpus int) string {
		hours := gpuHoursPerMillion(cand, gpus)
		if price.Dollars == 0 {
			return count(hours) + " GPU-hours"
		}
		return count(hours) + " GPU-hours, " + dollars(hours*price.Dollars)
	}
	row := func(name string, f func(app.Candidate, int) string) kv {
		return kv{name, f(p.Cand, p.GPUs), f(sel, r.GPUs)}
	}
	rows := []kv{
		row("planner", func(c app.Candidate, _ int) string { return c.Planner }),
		row("degrees", func(c app.Candidate, _ int) string {
			return fmt.Sprintf("t=%d × p=%d × cp=%s × d=%s, ep=%s, v=%d, ZeRO %d", c.Execution.TP, c.Execution.PP, degree(c.Execution.CP), dataParallel(c),
				expertDegree(c.Execution), c.Execution.Interleave, c.Execution.ZeRO)
		}),
		row("microbatching", func(c app.Candidate, _ int) string {
			return fmt.Sprintf("b=%d, m=%d, B=%d", c.Execution.MicrobatchSize, c.Microbatches, c.GlobalBatch)
		}),
		row("schedule", func(c app.Candidate, _ int) string {
			return string(c.Execution.Schedule) + ", recompute " + c.Execution.RecomputeText()
		}),
		row("step time", func(c app.Candidate, _ int) string { return secs(c.IterationSeconds) }),
	}
	// The step time by part (the step-time bar's parts), where either has
	// a breakdown; a part neither spends time on is left out.
	for i, part := range (cost.TimeBreakdown{}).Parts() {
		seconds := func(c app.Candidate) float64 {
			if c.Breakdown == nil {
				return 0
			}
			return c.Breakdown.Parts()[i].Seconds
		}
		if seconds(p.Cand) == 0 && seconds(sel) == 0 {
			continue
		}
		rows = append(rows, row("of which "+part.Name, func(c app.Candidate, _ int) string {
			if c.Breakdown == nil {
				return "—"
			}
			return secs(seconds(c))
		}))
	}
	rows = append(rows,
		row("throughput", func(c app.Candidate, _ int) string { return count(c.SamplesPerSecond) + " samples/s" }),
		row("MFU", func(c app.Candidate, _ int) string { return orDash(c.MFU, pct) }),
		row("peak memory", func(c app.Candidate, _ int) string {
			return gib(c.Memory.PeakBytes+c.Memory.ReserveBytes) + " of " + gib(c.Memory.CapacityBytes)
		}),
		row("bubble (idle share)", func(c app.Candidate, _ int) string { return pct(bubbleShare(c)) }),
		row("per million samples", dollarsPerMillion),
	)
	return &comparison{
		Pinned:   "pinned: " + p.Label,
		Selected: fmt.Sprintf("selected: %s on %d × %s", r.Model, r.GPUs, r.GPU),
		Rows:     rows,
	}
}

// gpuHoursPerMillion is the GPU-hours a candidate spends on 10^6 samples.
func gpuHoursPerMillion(c app.Candidate, gpus int) float64 {
	if c.SamplesPerSecond <= 0 {
		return 0
	}
	return float64(gpus) * 1e6 / c.SamplesPerSecond / 3600
}

// DownloadCandidatesCSV offers the candidates table as candidates.csv, in
// the core's units (seconds, samples/s, TFLOP/s, GiB, fractions).
func (a *App) DownloadCandidatesCSV() {
	r := a.Plan.Result
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{"rank", "planner", "t", "p", "cp", "ep", "etp", "d", "b", "v", "m", "schedule", "recompute", "recompute_layers", "recompute_modules", "zero", "global_batch",
		"step_s", "samples_per_s", "model_tflops_per_gpu", "hardware_tflops_per_gpu", "mfu",
		"peak_memory_gib", "capacity_gib", "bubble_idle_share", "bubble_fraction_paper", "fits", "reason"})
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	write := func(rank string, c app.Candidate) {
		w.Write([]string{rank, c.Planner, strconv.Itoa(c.Execution.TP), strconv.Itoa(c.Execution.PP), degree(c.Execution.CP), degree(c.Execution.EP), strconv.Itoa(c.Execution.ExpertTP()),
			dataParallel(c), strconv.Itoa(c.Execution.MicrobatchSize), strconv.Itoa(c.Execution.Interleave), strconv.Itoa(c.Microbatches),
			string(c.Execution.Schedule), string(c.Execution.Recompute), strconv.Itoa(c.Execution.RecomputeLayers), c.Execution.RecomputeModules, strconv.Itoa(c.Execution.ZeRO), strconv.Itoa(c.GlobalBatch),
			g(c.IterationSeconds), g(c.SamplesPerSecond), g(c.ModelTFLOPSPerGPU), g(c.TFLOPSPerGPU), g(c.MFU),
			g((c.Memory.PeakBytes + c.Memory.ReserveBytes) / (1 << 30)), g(c.Memory.CapacityBytes / (1 << 30)),
			g(bubbleShare(c)), g(c.BubbleFraction), strconv.FormatBool(c.Fits), c.Reason})
	}
	for i, c := range r.Candidates {
		write(strconv.Itoa(i+1), c)
	}
	for _, c := range r.Infeasible {
		write("", c)
	}
	w.Flush()
	if err := a.browser.Download("candidates.csv", "text/csv", buf.Bytes()); err != nil {
		a.Err = "Download CSV: " + err.Error()
	}
}

// priceOf is the price per GPU-hour the run's cost uses, and where it comes from.
type priceOf struct {
	Dollars float64
	Source  string
}

// price is the page's price per GPU-hour: the user's, or the GPU's default
// from gpuprofiles' sourced, dated price lists (app.GPUPrice), or none.
func (a *App) price() priceOf {
	if p := a.State.Plan.PricePerGPUHour; p > 0 {
		return priceOf{p, "your price"}
	}
	if p, src, ok := app.GPUPrice(a.State.Plan.GPU); ok {
		return priceOf{p, src}
	}
	return priceOf{}
}

// Defaults of the run's size: GPT-3's 300 billion tokens (Brown et al.
// 2020, the dissertation's eq. 4.4 example), and 90 epochs of ImageNet-1k's
// 1,281,167 training images for a layer profile.
const (
	defaultTrainTokens  = 300e9
	defaultTrainSamples = 90 * 1281167
)

// trainAmount is what the run trains on, and its unit.
func (c *PlanPage) trainAmount() (float64, string) {
	v := c.App.State.Plan.TrainAmount
	if c.isTransformer() {
		if v == 0 {
			v = defaultTrainTokens
		}
		return v, "tokens"
	}
	if v == 0 {
		v = defaultTrainSamples
	}
	return v, "samples"
}

// runCost is the whole run on the selected candidate: samples (tokens ÷
// sequence length) at its throughput → days → GPU-hours → dollars.
func (c *PlanPage) runCost() []kv {
	r := c.App.Plan.Result
	if len(r.Candidates) == 0 {
		return nil
	}
	cand := r.Candidates[r.Selected]
	amount, unit := c.trainAmount()
	samples := amount
	how := "samples to train / samples/s"
	if unit == "tokens" {
		samples = amount / float64(c.seq())
		how = fmt.Sprintf("tokens / sequence length %d / samples/s (eq. 4.4 with the planner's throughput)", c.seq())
	}
	if cand.SamplesPerSecond <= 0 {
		return nil
	}
	seconds := samples / cand.SamplesPerSecond
	gpuHours := float64(r.GPUs) * seconds / 3600
	out := []kv{
		{"to train", count(amount) + " " + unit, "the run's size, an input on the left"},
		{"days", fmt.Sprintf("%.1f days", seconds/86400), how},
		{"GPU-hours", count(gpuHours), fmt.Sprintf("%d GPUs × the run's hours", r.GPUs)},
	}
	if p := c.App.price(); p.Dollars > 0 {
		out = append(out, kv{"cost", dollars(gpuHours * p.Dollars), fmt.Sprintf("GPU-hours × $%.3g per GPU-hour (%s)", p.Dollars, p.Source)})
	} else {
		out = append(out, kv{"cost", "enter a price per GPU-hour", "no sourced price for this GPU yet"})
	}
	return out
}

// priceText is the price input's value: the user's price, or the sourced default.
func (c *PlanPage) priceText() string {
	if p := c.App.price(); p.Dollars > 0 {
		return strconv.FormatFloat(p.Dollars, 'g', -1, 64)
	}
	return ""
}

// trainText is the run-size input's value.
func (c *PlanPage) trainText() string {
	v, _ := c.trainAmount()
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// trainLabel labels the run-size input with its unit.
func (c *PlanPage) trainLabel() string {
	if _, unit := c.trainAmount(); unit == "tokens" {
		return "Tokens to train"
	}
	return "Samples to train"
}

// SetRunCost sets an input of the run's cost (train_amount,
// price_per_gpu_hour): the fragment changes, the plan does not.
func (a *App) SetRunCost(field, value string) {
	v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
	if err != nil {
		a.Err = fmt.Sprintf("plan.%s: must be a number, got %q", field, value)
		return
	}
	next := a.State
	switch field {
	case "train_amount":
		next.Plan.TrainAmount = v
	case "price_per_gpu_hour":
		next.Plan.PricePerGPUHour = v
	default:
		a.Err = fmt.Sprintf("plan.%s: not a run-cost input", field)
		return
	}
	if err := next.Validate(); err != nil {
		a.Err = err.Error()
		return
	}
	a.State = next
	a.Err = ""
	if f, err := request.Encode(a.State); err == nil && f != a.fragment {
		a.fragment = f
		a.browser.SetFragment(f)
	}
}

// count formats a quantity with an SI-style word suffix: 1,234; 1.2 M; 300 B.
func count(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e12:
		return fmt.Sprintf("%.3g T", v/1e12)
	case a >= 1e9:
		return fmt.Sprintf("%.3g B", v/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.3g M", v/1e6)
	case a >= 1e4:
		return thousands(math.Round(v))
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// thousands formats an integral value with comma separators.
func thousands(v float64) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', 0, 64)
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	for i, d := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String()
}

// dollars formats an amount of dollars.
func dollars(v float64) string { return "$" + count(v) }
