package app

import (
	"context"
	"fmt"
	"slices"

	"pipeplan/app/request"
	"pipeplan/core/gavel"
	"pipeplan/gpuprofiles"
)

// PricePreset is a sourced list of GPU-hour prices for some worker types.
type PricePreset struct {
	ID, Name string
	// Source says where the prices come from; Date when they held.
	Source, Date string
	// Prices are dollars per GPU-hour, one per worker type asked for.
	Prices []float64
}

// PricePresets lists the price lists of gpuprofiles that price every one
// of Gavel's worker types (request.WorkerTypes(WorkloadJobTypes)), in that order.
func PricePresets() []PricePreset {
	var out []PricePreset
	for _, p := range PriceListsFor(request.WorkerTypes(request.WorkloadJobTypes)) {
		if !slices.Contains(p.Prices, 0) {
			out = append(out, p)
		}
	}
	return out
}

// PriceListsFor returns every price list of gpuprofiles with its prices
// for types (Gavel's names or gpus.json ids), in types' order, 0 where the
// list has no price for the type.
func PriceListsFor(types []string) []PricePreset {
	var out []PricePreset
	for _, l := range gpuprofiles.PriceLists() {
		p := PricePreset{ID: l.ID, Name: l.Name, Source: l.Source, Date: l.Date, Prices: make([]float64, len(types))}
		for j, wt := range types {
			if v, err := l.ForWorkerTypes([]string{wt}); err == nil {
				p.Prices[j] = v[0]
			}
		}
		out = append(out, p)
	}
	return out
}

// CostTypes returns the Cost page's worker types and GPU counts: the
// Cluster page's, or Gavel's three with 8 GPUs each while it shows the
// §5.4.1 example (whose throughputs are not per job type).
func CostTypes(cl request.Cluster) ([]string, []int) {
	if cl.Workload == request.WorkloadJobTypes && len(cl.GPUs) == len(cl.Types()) {
		return cl.Types(), cl.GPUs
	}
	types := request.WorkerTypes(request.WorkloadJobTypes)
	gpus := make([]int, len(types))
	for j := range gpus {
		gpus[j] = 8
	}
	return types, gpus
}

// CostPrices returns the prices of in for types: in.Prices when it has
// one per type, else the preset's, each type the list lacks taken from the
// first list of gpuprofiles that prices it. Its error names the field and
// the GPU no list prices.
func CostPrices(types []string, in request.Cost) ([]float64, error) {
	if len(in.Prices) == len(types) {
		return in.Prices, nil
	}
	lists := PriceListsFor(types)
	if i := slices.IndexFunc(lists, func(p PricePreset) bool { return p.ID == in.Preset }); i > 0 {
		lists = append([]PricePreset{lists[i]}, lists...) // the preset first
	}
	prices := make([]float64, len(types))
	for j, wt := range types {
		for _, l := range lists {
			if l.Prices[j] > 0 {
				prices[j] = l.Prices[j]
				break
			}
		}
		if prices[j] == 0 {
			return nil, fmt.Errorf("cost.prices[%d]: no price list has %s; enter its price per GPU-hour", j, wt)
		}
	}
	return prices, nil
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
	// throughput relative to CostResult.Reference (the K80 in Table 6.1).
	Speedup       []float64 `json:"speedup_vs_k80"`
	DollarSpeedup []float64 `json:"dollar_speedup_vs_k80"`
	// Cheapest is the worker type with the most steps per dollar.
	Cheapest string `json:"cheapest"`
}

// CostResult is the Cost page's answer.
type CostResult struct {
	WorkerTypes []string `json:"worker_types"`
	// Prices are the dollars per GPU-hour used, one per worker type.
	Prices []float64 `json:"prices"`
	// Reference is the worker type the speedups compare with: the K80, as
	// in Table 6.1, or the cluster's last type when it has none.
	Reference string    `json:"reference"`
	Rows      []CostRow `json:"rows"`
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
	jt.Workload = request.WorkloadJobTypes
	jt.WorkerTypes, jt.GPUs = CostTypes(cl)
	if cl.Workload != request.WorkloadJobTypes {
		jt.WorkerTypes = nil // Gavel's own three
	}
	prices, err := CostPrices(jt.Types(), in)
	if err != nil {
		return CostResult{}, err
	}
	in.Prices = prices
	inst, labels, sources, err := instance(ctx, jt)
	if err != nil {
		return CostResult{}, err
	}
	res := CostResult{WorkerTypes: inst.WorkerTypes, Prices: prices}
	ref := slices.Index(inst.WorkerTypes, "k80")
	if ref < 0 {
		ref = len(inst.WorkerTypes) - 1
	}
	res.Reference = inst.WorkerTypes[ref]
	for m, t := range inst.Throughputs {
		scale := float64(inst.Jobs[m].ScaleFactor)
		row := CostRow{Job: labels[m], Throughputs: t}
		best := -1.0
		for j, v := range t {
			spd := v * 3600 / (in.Prices[j] * scale)
			row.StepsPerDollar = append(row.StepsPerDollar, spd)
			row.Speedup = append(row.Speedup, ratio(v, t[ref]))
			row.DollarSpeedup = append(row.DollarSpeedup, ratio(spd, t[ref]*3600/(in.Prices[ref]*scale)))
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
