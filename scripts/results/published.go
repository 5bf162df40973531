package results

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"pipeplan/app"
	"pipeplan/core/cost"
	"pipeplan/core/model"
	"pipeplan/gpuprofiles"
)

// publishedRunsPath is the published training runs the cost model is
// checked against (core/cost's TestPublishedRuns), from this package's
// directory.
const publishedRunsPath = "../../core/cost/testdata/published_runs.json"

// PublishedRunRows compares the cost model with every stored published run
// (cost.ComparePublished, the comparison TestPublishedRuns asserts), each
// run's model the app's preset of that id, in the file's order.
func PublishedRunRows() ([]cost.PublishedComparison, error) {
	data, err := os.ReadFile(publishedRunsPath)
	if err != nil {
		return nil, err
	}
	runs, err := cost.ReadPublishedRuns(data)
	if err != nil {
		return nil, err
	}
	presets := map[string]model.Transformer{}
	for _, m := range app.Models() {
		if m.Transformer != nil {
			presets[m.ID] = *m.Transformer
		}
	}
	out := make([]cost.PublishedComparison, len(runs))
	for i, r := range runs {
		tr, err := r.Transformer(func(id string) (model.Transformer, error) {
			if tr, ok := presets[id]; ok {
				return tr, nil
			}
			return model.Transformer{}, fmt.Errorf("model %q is no preset of the app", id)
		})
		if err != nil {
			return nil, err
		}
		g, err := gpuprofiles.ByID(r.GPU)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.ID, err)
		}
		if out[i], err = cost.ComparePublished(r, tr, g); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// otherEngines names the sources whose runs are tabled apart from the
// rest of their GPU and family, with the engine that ran them: an engine
// the model is not built from, whose errors would otherwise blur the
// table's summary.
var otherEngines = map[string]string{
	"MosaicML llm-foundry": "Composer with PyTorch FSDP, 2023",
}

// publishedGroup is the runs of one GPU, model family and engine.
type publishedGroup struct {
	gpu    string // gpuprofiles id
	moe    bool
	source string // a key of otherEngines, or "" for the rest
	rows   []cost.PublishedComparison
}

// groupPublished groups rows by GPU, family (dense first) and engine (the
// rest first, then otherEngines'), GPUs in the order they first appear.
func groupPublished(rows []cost.PublishedComparison) []publishedGroup {
	type key struct {
		gpu    string
		moe    bool
		source string
	}
	var gpus []string
	seen := map[string]bool{}
	byKey := map[key][]cost.PublishedComparison{}
	for _, r := range rows {
		k := key{r.Run.GPU, r.Transformer.MoE != nil, ""}
		if _, ok := otherEngines[r.Run.SourceName]; ok {
			k.source = r.Run.SourceName
		}
		if !seen[k.gpu] {
			seen[k.gpu] = true
			gpus = append(gpus, k.gpu)
		}
		byKey[k] = append(byKey[k], r)
	}
	sources := []string{""}
	for s := range otherEngines {
		sources = append(sources, s)
	}
	slices.Sort(sources[1:])
	var out []publishedGroup
	for _, gpu := range gpus {
		for _, moe := range []bool{false, true} {
			for _, src := range sources {
				if rs := byKey[key{gpu, moe, src}]; len(rs) > 0 {
					out = append(out, publishedGroup{gpu, moe, src, rs})
				}
			}
		}
	}
	return out
}

// PublishedRunsMarkdown renders every stored published run against its
// prediction, one table per GPU, model family and engine, each followed by the
// mean absolute and worst error of its runs and of those asserted.
func PublishedRunsMarkdown() (string, error) {
	rows, err := PublishedRunRows()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(codeBlock([]string{"go test ./core/cost -run 'TestPublishedRuns$' -v   # the same comparisons, with each step's breakdown"}))
	for _, g := range groupPublished(rows) {
		gpu, err := gpuprofiles.ByID(g.gpu)
		if err != nil {
			return "", err
		}
		family := "dense"
		if g.moe {
			family = "mixture of experts"
		}
		calibration := ""
		if g.rows[0].Prediction.Calibration != "" {
			calibration = " — uncalibrated GPU (each prediction says so)"
		}
		if g.source != "" {
			family += ", " + g.source + " (" + otherEngines[g.source] + ")"
		}
		fmt.Fprintf(&b, "\n**%s, %s** (`%s`)%s\n\n", gpu.Name, family, g.gpu, calibration)
		cells := make([][]string, len(g.rows))
		var asserted []cost.PublishedComparison
		for i, r := range g.rows {
			cells[i] = publishedCells(r)
			if r.Bound > 0 {
				asserted = append(asserted, r)
			}
		}
		b.WriteString(table([]string{"run", "source", "degrees", "published tokens/s/GPU (TFLOP/s)", "predicted", "error", "set", "checked"}, cells))
		fmt.Fprintf(&b, "\n%s", errorSummary(fmt.Sprintf("All %d runs", len(g.rows)), g.rows))
		if len(asserted) > 0 && len(asserted) < len(g.rows) {
			fmt.Fprintf(&b, "; %s", errorSummary(fmt.Sprintf("the %d asserted", len(asserted)), asserted))
		}
		b.WriteString(".\n")
	}
	return b.String(), nil
}

// publishedCells is one run's row: its id, source, degrees (and what the
// search chose where the source does not say), published and predicted
// throughput per GPU (tokens/s, or model TFLOP/s in brackets where the
// source gives no tokens/s), error, set and whether TestPublishedRuns
// asserts it.
func publishedCells(c cost.PublishedComparison) []string {
	r, ex := c.Run, c.Execution
	published, predicted := thousands(r.PublishedTokens), thousands(c.Prediction.TokensPerSec/float64(r.GPUs))
	if r.PublishedTokens == 0 {
		published, predicted = "("+thousands(r.PublishedTFLOPS)+")", "("+thousands(c.Prediction.ModelTFLOPSPerGPU)+")"
	}
	degrees := fmt.Sprintf("t%d", r.TP)
	for _, d := range []struct {
		name string
		v    int
	}{{"cp", r.CP}, {"p", r.PP}, {"d", r.DP}, {"ep", r.EP}, {"etp", r.ETP}, {"fsdp", r.FSDP}} {
		if d.v > 1 {
			degrees += fmt.Sprintf(" %s%d", d.name, d.v)
		}
	}
	degrees += fmt.Sprintf(" b%d", r.Microbatch)
	if r.AttentionKernel != "" {
		degrees += " " + r.AttentionKernel // the attention kernels, where not cuDNN's
	}
	var chosen []string
	if r.VP == 0 && ex.Interleave > 1 {
		chosen = append(chosen, fmt.Sprintf("v%d", ex.Interleave))
	}
	if r.Recompute == "" {
		chosen = append(chosen, "recompute "+ex.RecomputeText())
	}
	if r.VP > 1 {
		degrees += fmt.Sprintf(" v%d", r.VP)
	}
	if r.Schedule != "" {
		degrees += " " + string(r.Schedule) // the pipeline schedule, where not Megatron-LM's
	}
	if len(chosen) > 0 {
		degrees += " (searched: " + strings.Join(chosen, ", ") + ")"
	}
	checked := "reported"
	if c.Bound > 0 {
		checked = fmt.Sprintf("asserted ±%.0f %%", 100*c.Bound)
	}
	if c.Tight {
		checked += "; fits only without the reserve"
	}
	set := strings.ReplaceAll(r.Set, "_", " ")
	if r.Fits != "" {
		set += " (`" + r.Fits + "`)"
	}
	return []string{"`" + r.ID + "`", r.SourceName, degrees, published, predicted, percent(c.Error), set, checked}
}

// errorSummary is "label: mean absolute error x %, worst y % (id)".
func errorSummary(label string, rows []cost.PublishedComparison) string {
	var sum float64
	worst := rows[0]
	for _, r := range rows {
		sum += math.Abs(r.Error)
		if math.Abs(r.Error) > math.Abs(worst.Error) {
			worst = r
		}
	}
	return fmt.Sprintf("%s: mean absolute error %.1f %%, worst %s (`%s`)", label, 100*sum/float64(len(rows)), percent(worst.Error), worst.Run.ID)
}

// percent formats a relative error as a signed percentage with one
// decimal ("−6.1 %", "+9.7 %").
func percent(x float64) string {
	s := fmt.Sprintf("%+.1f %%", 100*x)
	return strings.Replace(s, "-", "−", 1)
}

// thousands formats v rounded to an integer with comma separators.
func thousands(v float64) string {
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "−" + s
	}
	return s
}
