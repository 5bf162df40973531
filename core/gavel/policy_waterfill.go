package gavel

import (
	"context"
	"fmt"
	"math"

	"pipeplan/core/lp"
)

func init() {
	registerPolicy(PolicyInfo{Name: "max_min_fairness_water_filling_perf", Title: "Hierarchical max-min fairness (water filling)",
		Section: "§5.4.3", Objective: "entities share by weight, jobs within an entity by fairness or FIFO; repeated max-min LPs until every job is bottlenecked",
		HeterogeneityAware: true}, func(o policyOptions) (func(context.Context, *Instance) (*Allocation, error), error) {
		for e, p := range o.entityPolicies {
			if p != "fairness" && p != "fifo" {
				return nil, fmt.Errorf("entity %q: policy must be \"fairness\" or \"fifo\", got %q", e, p)
			}
		}
		return func(ctx context.Context, inst *Instance) (*Allocation, error) {
			return waterFilling(ctx, inst, o.entityPolicies)
		}, nil
	})
}

// improveTol is the normalized-throughput gain below which a job counts as
// bottlenecked.
const improveTol = 1e-6

// waterFilling is the hierarchical max-min fairness of §5.4.3: entities
// (Job.Entity, weights Instance.EntityWeights, default 1) share the cluster
// by weight, and within an entity jobs share by fairness (weights
// proportional to PriorityWeight) or FIFO (the first unsaturated job gets the
// entity's whole weight). Each iteration solves
// Maximize_X min_{w_m > 0} (norm(m,X) - t_m)/w_m subject to norm(m,X) >= t_m
// for all m, raises the levels t_m, and marks bottlenecked jobs, whose
// weight goes to the other jobs of their entity; it stops when every job is
// bottlenecked. With all jobs in one entity it is water filling for plain
// weighted max-min fairness. norm(m,X) = scale_factor_m *
// throughput(m,X)/throughput(m,X^equal_m). The objective is the minimum of
// norm(m,X)/PriorityWeight_m.
func waterFilling(ctx context.Context, inst *Instance, entityPolicies map[string]string) (*Allocation, error) {
	t := inst.Throughputs
	n := len(inst.Jobs)
	norm := make([]float64, n)
	for m, job := range inst.Jobs {
		norm[m] = float64(job.ScaleFactor) / equalThroughput(inst, t, m)
	}
	level := make([]float64, n)
	done := make([]bool, n)
	var al *Allocation
	for iter, remaining := 0, n; remaining > 0; iter++ {
		if iter > n {
			return nil, fmt.Errorf("water filling: no bottleneck found after %d iterations (numerical trouble)", iter)
		}
		w := jobWeights(inst, done, entityPolicies)
		a := newAllocLP(inst, t, false)
		z := a.addVar(1)
		for m := range inst.Jobs {
			idx, val := a.throughput(m, norm[m])
			if w[m] > 0 {
				idx, val = append(idx, z), append(val, -w[m])
			}
			a.addRow(idx, val, lp.GE, level[m])
		}
		sol, err := a.solve(ctx)
		if err != nil {
			return nil, err
		}
		al = a.allocation(sol, 1)
		for m := range level {
			level[m] += w[m] * sol[z]
		}
		stuck, err := bottlenecked(ctx, inst, norm, level, w)
		if err != nil {
			return nil, err
		}
		for _, m := range stuck {
			done[m] = true
			remaining--
		}
	}
	al.Objective = math.Inf(1)
	for m, eff := range effectiveThroughputs(inst, t, al) {
		al.Objective = min(al.Objective, norm[m]*eff/inst.Jobs[m].PriorityWeight)
	}
	return al, nil
}

// bottlenecked returns the jobs with w_m > 0 whose normalized throughput
// cannot rise above level without another job dropping below its level
// (§5.4.3). Instead of the paper's MILP it solves LPs: maximize
// sum_{m in S} d_m subject to norm(m,X) >= level_m + d_m (m in S),
// norm(m,X) >= level_m (all m), 0 <= d_m <= 1. Jobs with d_m > 0 can improve
// and leave S; when the optimum is 0, every job left in S is bottlenecked
// (if each could improve alone, their average allocation would improve all).
func bottlenecked(ctx context.Context, inst *Instance, norm, level, w []float64) ([]int, error) {
	var set []int
	for m, wm := range w {
		if wm > 0 {
			set = append(set, m)
		}
	}
	for len(set) > 0 {
		a := newAllocLP(inst, inst.Throughputs, false)
		d := map[int]int{}
		for _, m := range set {
			d[m] = a.addVar(1)
			a.addRow([]int{d[m]}, []float64{1}, lp.LE, 1)
		}
		for m := range inst.Jobs {
			idx, val := a.throughput(m, norm[m])
			if v, ok := d[m]; ok {
				idx, val = append(idx, v), append(val, -1)
			}
			a.addRow(idx, val, lp.GE, level[m])
		}
		sol, err := a.solve(ctx)
		if err != nil {
			return nil, err
		}
		var keep []int
		for _, m := range set {
			if sol[d[m]] <= improveTol {
				keep = append(keep, m)
			}
		}
		if len(keep) == len(set) {
			return set, nil
		}
		set = keep
	}
	return nil, nil
}

// jobWeights distributes each entity's weight over its jobs that are not
// done, by the entity's policy (§5.4.3).
func jobWeights(inst *Instance, done []bool, entityPolicies map[string]string) []float64 {
	byEntity := map[string][]int{}
	var entities []string
	for m, job := range inst.Jobs {
		if done[m] {
			continue
		}
		if _, ok := byEntity[job.Entity]; !ok {
			entities = append(entities, job.Entity)
		}
		byEntity[job.Entity] = append(byEntity[job.Entity], m)
	}
	w := make([]float64, len(inst.Jobs))
	for _, e := range entities {
		we, ok := inst.EntityWeights[e]
		if !ok {
			we = 1
		}
		jobs := byEntity[e]
		if entityPolicies[e] == "fifo" {
			first := jobs[0]
			for _, m := range jobs {
				if inst.Jobs[m].ArrivalSeconds < inst.Jobs[first].ArrivalSeconds {
					first = m
				}
			}
			w[first] = we
			continue
		}
		total := 0.0
		for _, m := range jobs {
			total += inst.Jobs[m].PriorityWeight
		}
		for _, m := range jobs {
			w[m] = we * inst.Jobs[m].PriorityWeight / total
		}
	}
	return w
}
