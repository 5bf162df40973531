package ui

import (
	"context"
	"fmt"
	"strconv"

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

func (c *CostPage) presets() []app.PricePreset { return app.PricePresets() }
func (c *CostPage) workerTypes() []string      { return request.WorkerTypes(request.WorkloadJobTypes) }

func (c *CostPage) presetSource() string {
	for _, p := range app.PricePresets() {
		if p.ID == c.App.State.Cost.Preset {
			return "Source: " + p.Source
		}
	}
	return "Prices edited by hand."
}

func (c *CostPage) costHeaders() []column {
	var out []column
	for _, wt := range c.workerTypes() {
		out = append(out, column{wt + " steps/$", "cost-normalized throughput: steps/s × 3600 / (price × GPUs) (§6.3.1)"})
	}
	for _, wt := range c.workerTypes()[:2] {
		out = append(out, column{wt + " vs k80", "throughput speedup over the K80 (Table 6.1)"},
			column{wt + " $ vs k80", "cost-normalized speedup over the K80 (Table 6.1)"})
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
		for j := 0; j < 2; j++ { // a job that cannot run on the K80 (a planned job) has no ratio
			cells = append(cells, orDash(r.Speedup[j], times), orDash(r.DollarSpeedup[j], times))
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

// SetCostPreset loads a price list.
func (a *App) SetCostPreset(id string) {
	a.setCost("preset", func(c *request.Cost) error {
		for _, p := range app.PricePresets() {
			if p.ID == id {
				c.Preset, c.Prices = id, append([]float64(nil), p.Prices...)
				return nil
			}
		}
		c.Preset = "custom"
		return nil
	})
}

// SetCostPrice edits the price of worker type i (the list becomes custom).
func (a *App) SetCostPrice(i int, value string) {
	a.setCost("prices", func(c *request.Cost) error {
		v, err := strconv.ParseFloat(value, 64)
		c.Prices[i], c.Preset = v, "custom"
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
