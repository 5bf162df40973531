package app

import (
	"context"

	"pipeplan/app/request"
	"pipeplan/core/gavel"
	"pipeplan/gpuprofiles"
)

// PricePreset is a sourced list of GPU-hour prices for the Cost page's
// worker types.
type PricePreset struct {
	ID, Name string
	// Source says where the prices come from; Date when they held.
	Source, Date string
	// Prices are dollars per GPU-hour, in request.WorkerTypes(WorkloadJobTypes) order.
	Prices []float64
}

// PricePresets lists the price lists of gpuprofiles that price every one
// of the Cost page's worker types.
func PricePresets() []PricePreset {
	var out []PricePreset
	for _, l := range gpuprofiles.PriceLists() {
		prices, err := l.ForWorkerTypes(request.WorkerTypes(request.WorkloadJobTypes))
		if err != nil {
			continue // a list without these GPUs
		}
		out = append(out, PricePreset{ID: l.ID, Name: l.Name, Source: l.Source, Date: l.Date, Prices: prices})
	}
	return out
}

// CostRow compares the GPU types for one job (Table 6.1's columns).
type CostRow struct {
	Job string `json:"job"`
	// Throughputs are steps/s per worker type.
	Throughputs []float64 `json:"throughputs"`
	// StepsPerDollar is throughput × 3600 / (price × scale factor), the
	// cost-normalized throughput (§6.3.1).
	StepsPerDollar []float64 `json:"steps_per_dollar"`
	// Speedup and DollarSpeedup are throughput and cost-normalized
	// throughput relative to the K80 (Table 6.1).
	Speedup       []float64 `json:"speedup_vs_k80"`
	DollarSpeedup []float64 `json:"dollar_speedup_vs_k80"`
	// Cheapest is the worker type with the most steps per dollar.
	Cheapest string `json:"cheapest"`
}

// CostResult is the Cost page's answer.
type CostResult struct {
	WorkerTypes []string  `json:"worker_types"`
	Rows        []CostRow `json:"rows"`
	// Allocation is the min-cost allocation (with SLOs when a deadline is set).
	Allocation ClusterResult `json:"allocation"`
	// DollarsPerHour is the allocation's cost rate, Σ X·scale·price (§6.4.2).
	DollarsPerHour float64 `json:"dollars_per_hour"`
	// FinishHours is each job's work over its effective throughput.
	FinishHours []float64 `json:"finish_hours"`
	// Problem says why there is no allocation (e.g. SLOs that cannot be met).
	Problem string `json:"problem,omitempty"`
}

// Cost compares GPU types by cost-normalized throughput for the Cluster
// page's jobs and solves the min-cost policy (with SLOs when a deadline is
// set; §6.4.2–6.4.3) on its cluster.
func Cost(ctx context.Context, cl request.Cluster, in request.Cost) (CostResult, error) {
	if err := in.Validate(); err != nil {
		return CostResult{}, err
	}
	jt := cl
	jt.Workload, jt.WorkerTypes = request.WorkloadJobTypes, nil // the Cost page prices Gavel's types
	if len(jt.GPUs) != len(request.WorkerTypes(jt.Workload)) || cl.WorkerTypes != nil {
		jt.GPUs = []int{8, 8, 8}
	}
	inst, labels, sources, err := instance(ctx, jt)
	if err != nil {
		return CostResult{}, err
	}
	res := CostResult{WorkerTypes: inst.WorkerTypes}
	k80 := len(inst.WorkerTypes) - 1
	for m, t := range inst.Throughputs {
		scale := float64(inst.Jobs[m].ScaleFactor)
		row := CostRow{Job: labels[m], Throughputs: t}
		best := -1.0
		for j, v := range t {
			spd := v * 3600 / (in.Prices[j] * scale)
			row.StepsPerDollar = append(row.StepsPerDollar, spd)
			row.Speedup = append(row.Speedup, ratio(v, t[k80]))
			row.DollarSpeedup = append(row.DollarSpeedup, ratio(spd, t[k80]*3600/(in.Prices[k80]*scale)))
			if spd > best {
				best, row.Cheapest = spd, inst.WorkerTypes[j]
			}
		}
		res.Rows = append(res.Rows, row)
	}
	inst.PricePerHour = in.Prices
	policy := "min_cost_perf"
	for m := range inst.Jobs {
		// A job's own steps and SLO (Cluster page) override the page-wide ones.
		if inst.Jobs[m].NumSteps == 0 {
			inst.Jobs[m].NumSteps = in.WorkHours * 3600 * inst.Throughputs[m][0]
		}
		if inst.Jobs[m].SLOSeconds == 0 {
			inst.Jobs[m].SLOSeconds = in.DeadlineHours * 3600
		}
		if inst.Jobs[m].SLOSeconds > 0 {
			policy = "min_cost_slo_perf"
		}
	}
	p, err := gavel.PolicyByName(policy)
	if err != nil {
		return CostResult{}, err
	}
	al, err := p.Allocate(ctx, inst)
	if err != nil {
		res.Problem = err.Error()
		return res, nil
	}
	res.Allocation = ClusterResult{WorkerTypes: inst.WorkerTypes, Jobs: labels, Throughputs: inst.Throughputs, Sources: sources, X: al.X,
		Effective: gavel.EffectiveThroughputs(inst, al), Policy: policy}
	for m, row := range al.X {
		for j, x := range row {
			res.DollarsPerHour += x * float64(inst.Jobs[m].ScaleFactor) * in.Prices[j]
		}
		res.FinishHours = append(res.FinishHours, ratio(inst.Jobs[m].NumSteps, res.Allocation.Effective[m])/3600)
	}
	return res, nil
}

// ratio is a/b, or 0 when b is 0 (a job that cannot run somewhere).
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
