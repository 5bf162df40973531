package ui

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vugu/vugu"

	"pipeplan/app"
	"pipeplan/app/request"
)

// CostPage is the Cost page (dissertation ch. 6): GPU-hour prices,
// cost-normalized throughput per job and GPU type, and the min-cost
// allocation that meets the jobs' deadlines.
type CostPage struct {
	// App is the shared application model.
	App *App
}

// CostView is the Cost page's latest result.
type CostView struct {
	Result app.CostResult
	Err    string
}

func (c *CostPage) presets() []app.PricePreset { return app.PriceListsFor(c.workerTypes()) }

// workerTypes are the Cost page's GPU types: the Cluster page's (app.CostTypes).
func (c *CostPage) workerTypes() []string {
	types, _ := app.CostTypes(c.App.State.Cluster)
	return types
}

// price is the price of worker type i shown in its input: the page's own,
// or the preset's when the Cluster page's types changed.
func (c *CostPage) price(i int) string {
	prices, err := app.CostPrices(c.workerTypes(), c.App.State.Cost)
	if err != nil || i >= len(prices) {
		return ""
	}
	return strconv.FormatFloat(prices[i], 'f', -1, 64)
}

func (c *CostPage) presetSource() string {
	types := c.workerTypes()
	for _, l := range c.presets() {
		if l.ID != c.App.State.Cost.Preset {
			continue
		}
		var missing []string
		for j, p := range l.Prices {
			if p == 0 {
				missing = append(missing, types[j])
			}
		}
		text := "Source (" + l.Date + "): " + l.Source
		if len(missing) > 0 {
			text += " This list has no price for " + strings.Join(missing, ", ") + ": taken from the first list that has one; edit it below."
		}
		return text
	}
	return "Prices edited by hand."
}

func (c *CostPage) costHeaders() []column {
	var out []column
	for _, wt := range c.workerTypes() {
		out = append(out, column{wt + " steps/$", "cost-normalized throughput: steps/s × 3600 / (price × GPUs) (§6.3.1)"})
	}
	ref := c.App.CostView.Result.Reference
	for _, wt := range c.workerTypes() {
		if wt != ref {
			out = append(out, column{wt + " vs " + ref, "throughput speedup over the " + ref + " (Table 6.1)"},
				column{wt + " $ vs " + ref, "cost-normalized speedup over the " + ref + " (Table 6.1)"})
		}
	}
	return out
}

func (c *CostPage) costRows() []tableRow {
	var out []tableRow
	for i, r := range c.App.CostView.Result.Rows {
		cells := []string{r.Job}
		for _, v := range r.StepsPerDollar {
			cells = append(cells, num(v))
		}
		times := func(v float64) string { return fmt.Sprintf("%.2f×", v) }
		res := c.App.CostView.Result
		for j, wt := range res.WorkerTypes { // a job that cannot run on the reference (a planned job) has no ratio
			if wt != res.Reference {
				cells = append(cells, orDash(r.Speedup[j], times), orDash(r.DollarSpeedup[j], times))
			}
		}
		out = append(out, tableRow{Index: i, Cells: append(cells, r.Cheapest)})
	}
	return out
}

func (c *CostPage) rateText() string {
	return fmt.Sprintf("costs $%.2f per hour while all jobs run", c.App.CostView.Result.DollarsPerHour)
}

func (c *CostPage) heatmapSVG() vugu.HTML {
	a := c.App.CostView.Result.Allocation
	return vugu.HTML(heatmapSVG(a.Jobs, a.WorkerTypes, a.X, a.Throughputs))
}

func (c *CostPage) finishRows() []tableRow {
	r := c.App.CostView.Result
	var out []tableRow
	for m, h := range r.FinishHours {
		out = append(out, tableRow{Index: m, Cells: []string{r.Allocation.Jobs[m], fmt.Sprintf("%.1f h", h)}})
	}
	return out
}

// recost recomputes the Cost page.
func (a *App) recost() {
	res, err := app.Cost(context.Background(), a.State.Cluster, a.State.Cost)
	a.CostView = CostView{Result: res}
	if err != nil {
		a.CostView.Err = err.Error()
	}
}

// setCost applies a change to the Cost inputs if it validates.
func (a *App) setCost(field string, change func(c *request.Cost) error) {
	next := a.State.Cost
	next.Prices = append([]float64(nil), next.Prices...)
	err := change(&next)
	if err == nil {
		err = next.Validate()
	}
	if err != nil {
		a.Err = fmt.Sprintf("cost.%s: %v", field, err)
		return
	}
	a.State.Cost = next
	a.changed()
}

// SetCostPreset loads a price list for the Cost page's worker types
// (a type the list lacks from the first list that has it, app.CostPrices).
func (a *App) SetCostPreset(id string) {
	types, _ := app.CostTypes(a.State.Cluster)
	a.setCost("preset", func(c *request.Cost) error {
		if !slices.ContainsFunc(app.PriceListsFor(types), func(p app.PricePreset) bool { return p.ID == id }) {
			c.Preset = "custom"
			return nil
		}
		prices, err := app.CostPrices(types, request.Cost{Preset: id})
		c.Preset, c.Prices = id, prices
		return err
	})
}

// SetCostPrice edits the price of worker type i (the list becomes custom).
func (a *App) SetCostPrice(i int, value string) {
	types, _ := app.CostTypes(a.State.Cluster)
	a.setCost("prices", func(c *request.Cost) error {
		prices, err := app.CostPrices(types, *c)
		if err != nil {
			prices = make([]float64, len(types))
		}
		if i < 0 || i >= len(prices) {
			return fmt.Errorf("no GPU type %d (the page has %d)", i, len(prices))
		}
		v, err := strconv.ParseFloat(value, 64)
		c.Prices, c.Preset = append([]float64(nil), prices...), "custom"
		c.Prices[i] = v
		return err
	})
}

// SetCostInput sets the work or deadline hours.
func (a *App) SetCostInput(field, value string) {
	a.setCost(field, func(c *request.Cost) error {
		v, err := strconv.ParseFloat(value, 64)
		if field == "work_hours" {
			c.WorkHours = v
		} else {
			c.DeadlineHours = v
		}
		return err
	})
}
