package gavel

import (
	"context"
	"fmt"

	"pipeplan/core/lp"
)

func init() {
	registerPolicy(PolicyInfo{Name: "min_total_duration_perf", Title: "Minimum makespan",
		Section: "§5.4.2, Table 5.1", Objective: "minimize max_m num_steps_m/throughput(m, X)",
		HeterogeneityAware: true, NeedsSteps: true}, staticPolicy(func(ctx context.Context, inst *Instance) (*Allocation, error) {
		return minMakespan(ctx, inst, false)
	}))
	registerPolicy(PolicyInfo{Name: "min_total_duration_packed", Title: "Minimum makespan with space sharing",
		Section: "§5.4.2, §5.3.1", Objective: "minimize max_m num_steps_m/throughput(m, X), co-located pairs counted",
		HeterogeneityAware: true, SpaceSharing: true, NeedsSteps: true}, staticPolicy(func(ctx context.Context, inst *Instance) (*Allocation, error) {
		return minMakespan(ctx, inst, true)
	}))
}

// remainingSteps returns each job's steps left (StepsRemaining, else
// NumSteps); policies about completion times need them.
func remainingSteps(inst *Instance) ([]float64, error) {
	r := make([]float64, len(inst.Jobs))
	for m, job := range inst.Jobs {
		r[m] = job.StepsRemaining
		if r[m] == 0 {
			r[m] = job.NumSteps
		}
		if r[m] <= 0 {
			return nil, fmt.Errorf("instance.jobs[%d]: needs num_steps or steps_remaining > 0", m)
		}
	}
	return r, nil
}

// scaledThroughputLP builds "maximize s subject to throughput(m, X) >=
// need[m]*s for all m" (need > 0; the shape of max-min fairness, makespan
// and the feasibility tests), each row divided by need[m] for conditioning;
// s is the index of the scale variable.
func scaledThroughputLP(inst *Instance, t [][]float64, need []float64, packed bool) (*allocLP, int) {
	return dividedThroughputLP(inst, t, need, need, packed)
}

// dividedThroughputLP is scaledThroughputLP with row m divided by div[m]
// instead of need[m]: "throughput(m,X)/div[m] - need[m]/div[m]*s >= 0".
func dividedThroughputLP(inst *Instance, t [][]float64, need, div []float64, packed bool) (*allocLP, int) {
	a := newAllocLP(inst, t, packed)
	s := a.addVar(1)
	for m := range inst.Jobs {
		idx, val := a.throughput(m, 1/div[m])
		a.addRow(append(idx, s), append(val, -need[m]/div[m]), lp.GE, 0)
	}
	return a, s
}

// maxScaledThroughput solves scaledThroughputLP and returns the LP, its
// solution and s.
func maxScaledThroughput(ctx context.Context, inst *Instance, t [][]float64, need []float64, packed bool) (*allocLP, []float64, float64, error) {
	a, s := scaledThroughputLP(inst, t, need, packed)
	sol, err := a.solve(ctx)
	if err != nil {
		return nil, nil, 0, err
	}
	return a, sol, sol[s], nil
}

// minMakespan solves Minimize_X max_m num_steps_m / throughput(m, X)
// (§5.4.2) exactly: with s = 1/makespan it is the LP "maximize s subject to
// throughput(m, X) >= num_steps_m * s". The objective is the makespan in
// seconds.
func minMakespan(ctx context.Context, inst *Instance, packed bool) (*Allocation, error) {
	r, err := remainingSteps(inst)
	if err != nil {
		return nil, err
	}
	a, sol, _, err := maxCompletionRate(ctx, inst, r, packed)
	if err != nil {
		return nil, err
	}
	al := a.allocation(sol, 1)
	al.Objective = makespanOf(inst, inst.Throughputs, al, r)
	return al, nil
}

// maxCompletionRate solves "maximize s subject to throughput(m, X) >=
// r[m]*s" with the steps scaled by their maximum to keep the LP well
// conditioned, and returns s in 1/seconds (1/s is the least makespan).
func maxCompletionRate(ctx context.Context, inst *Instance, r []float64, packed bool) (*allocLP, []float64, float64, error) {
	scale := 0.0
	for _, v := range r {
		scale = max(scale, v)
	}
	need := make([]float64, len(r))
	for m, v := range r {
		need[m] = v / scale
	}
	a, sol, s, err := maxScaledThroughput(ctx, inst, inst.Throughputs, need, packed)
	if err != nil {
		return nil, nil, 0, err
	}
	if s <= 0 {
		return nil, nil, 0, fmt.Errorf("no allocation lets every job progress")
	}
	return a, sol, s / scale, nil
}

// makespanOf returns max_m r[m] / throughput(m, X) in seconds.
func makespanOf(inst *Instance, t [][]float64, al *Allocation, r []float64) float64 {
	ms := 0.0
	for m, eff := range effectiveThroughputs(inst, t, al) {
		ms = max(ms, r[m]/eff)
	}
	return ms
}
