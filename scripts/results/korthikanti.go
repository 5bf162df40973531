package results

import (
	"fmt"
	"math"
	"os"
	"strings"

	"pipeplan/core/cost"
	"pipeplan/core/model"
	"pipeplan/gpuprofiles"
)

// korthikantiPath is Korthikanti et al. 2022's Table 5 and Figure 1
// (core/cost's TestKorthikantiTable5), from this package's directory.
const korthikantiPath = "../../core/cost/testdata/korthikanti2022.json"

// KorthikantiRow is the model's prediction for one Table 5 case.
type KorthikantiRow struct {
	Run cost.KorthikantiRun
	// Seconds is the predicted iteration time.
	Seconds float64
}

// Error is the prediction's relative error in iteration time.
func (r KorthikantiRow) Error() float64 { return r.Seconds/r.Run.PublishedSeconds - 1 }

// KorthikantiRows predicts Table 5's cases as TestKorthikantiTable5 does
// (cost.PredictKorthikanti with the default options), in the file's order.
func KorthikantiRows() ([]KorthikantiRow, error) {
	data, err := os.ReadFile(korthikantiPath)
	if err != nil {
		return nil, err
	}
	runs, _, err := cost.ReadKorthikanti(data)
	if err != nil {
		return nil, err
	}
	var rows []KorthikantiRow
	for _, r := range runs {
		g, err := gpuprofiles.ByID(r.GPU)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.ID, err)
		}
		pr, err := cost.PredictKorthikanti(r, g, cost.Options{})
		if err != nil {
			return nil, err
		}
		rows = append(rows, KorthikantiRow{Run: r, Seconds: pr.IterationSeconds})
	}
	return rows, nil
}

// KorthikantiMarkdown is the Table 5 section: each model's two cases side
// by side, the mean and worst error, and the speed-up of sequence
// parallelism + selective recomputation over full recomputation, predicted
// and published.
func KorthikantiMarkdown() (string, error) {
	rows, err := KorthikantiRows()
	if err != nil {
		return "", err
	}
	type pair struct {
		full, sel *KorthikantiRow
	}
	var order []string
	byModel := map[string]*pair{}
	var sum float64
	worst := rows[0]
	for i := range rows {
		r := &rows[i]
		sum += math.Abs(r.Error())
		if math.Abs(r.Error()) > math.Abs(worst.Error()) {
			worst = *r
		}
		m := strings.TrimSuffix(r.Run.ID, "-"+r.Run.Recompute)
		p, ok := byModel[m]
		if !ok {
			p = &pair{}
			byModel[m] = p
			order = append(order, m)
		}
		switch model.Recompute(r.Run.Recompute) {
		case model.RecomputeFull:
			p.full = r
		case model.RecomputeSelective:
			p.sel = r
		default:
			return "", fmt.Errorf("%s: recompute %q, want full or selective", r.Run.ID, r.Run.Recompute)
		}
	}
	var b strings.Builder
	b.WriteString("| case | GPUs (t, p, v) | batch | full recompute: paper / ours | error | selective + SP: paper / ours | error |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|\n")
	var gains, paperGains []string
	for _, m := range order {
		p := byModel[m]
		if p.full == nil || p.sel == nil {
			return "", fmt.Errorf("%s: needs a full and a selective case", m)
		}
		r := p.full.Run
		fmt.Fprintf(&b, "| `%s` | %d (%d, %d, %d) | %d | %.2f s / %.2f s | %s | %.2f s / %.2f s | %s |\n",
			m, r.GPUs, r.TP, r.PP, r.VP, r.GlobalBatch, r.PublishedSeconds, p.full.Seconds, percent(p.full.Error()),
			p.sel.Run.PublishedSeconds, p.sel.Seconds, percent(p.sel.Error()))
		gains = append(gains, percent(p.full.Seconds/p.sel.Seconds-1))
		paperGains = append(paperGains, percent(r.PublishedSeconds/p.sel.Run.PublishedSeconds-1))
	}
	fmt.Fprintf(&b, "\nAll %d cases: mean absolute error %.1f %%, worst %s (`%s`); issue 10's target is 3 %% mean and 6 %% worst.\n",
		len(rows), 100*sum/float64(len(rows)), percent(worst.Error()), worst.Run.ID)
	fmt.Fprintf(&b, "Speed-up of sequence parallelism + selective recomputation over full recomputation: ours %s; paper %s.\n",
		strings.Join(gains, ", "), strings.Join(paperGains, ", "))
	return b.String(), nil
}
