package request

import (
	"fmt"
	"math"
	"unicode/utf8"

	"pipeplan/gpuprofiles"
)

// Cost holds the Cost page's inputs. The jobs and GPU counts are the
// Cluster page's job-types workload.
type Cost struct {
	// Preset names the price list the prices came from ("custom" once edited).
	Preset string `json:"preset"`
	// Prices is the price of one GPU-hour in dollars per worker type of the
	// Cost page (the Cluster page's types, app.CostTypes); prices for other
	// types (the cluster changed) give way to the preset's.
	Prices []float64 `json:"prices"`
	// WorkHours is each job's work, in hours of its throughput on a V100.
	WorkHours float64 `json:"work_hours"`
	// DeadlineHours is every job's SLO; 0 means no SLO.
	DeadlineHours float64 `json:"deadline_hours"`
}

// Limits of the Cost page's inputs.
const (
	MaxPricePerHour = 1000
	MaxHours        = 100000
)

// DefaultCost is the default price list of gpuprofiles (Gavel's GCP
// on-demand prices), 10 V100-hours of work per job and a 24-hour deadline.
func DefaultCost() Cost {
	list := gpuprofiles.DefaultPriceList()
	prices, err := list.ForWorkerTypes(WorkerTypes(WorkloadJobTypes))
	if err != nil {
		// gpuprofiles' tests check the default list prices Gavel's types.
		panic("request: default price list: " + err.Error())
	}
	return Cost{Preset: list.ID, Prices: prices, WorkHours: 10, DeadlineHours: 24}
}

// Validate checks the Cost page's inputs; errors name the field and value.
func (c Cost) Validate() error {
	if c.Preset == "" || len(c.Preset) > 32 || !utf8.ValidString(c.Preset) {
		return fieldErr("cost.preset", "must name a price list, got %q", c.Preset)
	}
	if len(c.Prices) < 1 || len(c.Prices) > MaxWorkerTypes {
		return fieldErr("cost.prices", "must have 1 to %d prices (one per GPU type), got %d", MaxWorkerTypes, len(c.Prices))
	}
	for i, p := range c.Prices {
		if math.IsNaN(p) || p <= 0 || p > MaxPricePerHour {
			return fieldErr(fmt.Sprintf("cost.prices[%d]", i), "must be in (0, %d] dollars per GPU-hour, got %v", MaxPricePerHour, p)
		}
	}
	if math.IsNaN(c.WorkHours) || c.WorkHours <= 0 || c.WorkHours > MaxHours {
		return fieldErr("cost.work_hours", "must be in (0, %d], got %v", MaxHours, c.WorkHours)
	}
	if math.IsNaN(c.DeadlineHours) || c.DeadlineHours < 0 || c.DeadlineHours > MaxHours {
		return fieldErr("cost.deadline_hours", "must be in [0, %d] (0 = none), got %v", MaxHours, c.DeadlineHours)
	}
	return nil
}
