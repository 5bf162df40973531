package gavel

import (
	"encoding/json"
	"fmt"
	"math"
)

// ParseInstance decodes an allocation instance in the JSON schema of Gavel's
// LP instances (worker_types, num_workers, jobs, throughputs; extra keys such
// as cluster_spec or generator are ignored) and validates it. A job without a
// priority_weight gets weight 1.
func ParseInstance(data []byte) (*Instance, error) {
	var raw struct {
		Instance
		// Weights are read apart so that a missing weight defaults to 1.
		Jobs []struct {
			Job
			PriorityWeight *float64 `json:"priority_weight"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("instance: %w", err)
	}
	inst := raw.Instance
	inst.Jobs = make([]Job, len(raw.Jobs))
	for i, j := range raw.Jobs {
		inst.Jobs[i] = j.Job
		inst.Jobs[i].PriorityWeight = 1
		if j.PriorityWeight != nil {
			inst.Jobs[i].PriorityWeight = *j.PriorityWeight
		}
	}
	if err := inst.Validate(); err != nil {
		return nil, err
	}
	return &inst, nil
}

// Validate checks the instance: at least one worker type, at least one
// worker in all (a type may have none), one throughput row per job with one finite non-negative entry per
// worker type, every job able to run somewhere, positive scale factors and
// weights, unique job ids, and well-formed pairs and prices.
func (inst *Instance) Validate() error {
	k := len(inst.WorkerTypes)
	if k == 0 {
		return fmt.Errorf("instance.worker_types: must not be empty")
	}
	seen := map[string]bool{}
	for j, w := range inst.WorkerTypes {
		if w == "" {
			return fmt.Errorf("instance.worker_types[%d]: must not be empty", j)
		}
		if seen[w] {
			return fmt.Errorf("instance.worker_types[%d]: duplicate %q", j, w)
		}
		seen[w] = true
	}
	if len(inst.NumWorkers) != k {
		return fmt.Errorf("instance.num_workers: must have %d entries (one per worker type), got %d", k, len(inst.NumWorkers))
	}
	total := 0
	for j, n := range inst.NumWorkers {
		if n < 0 {
			return fmt.Errorf("instance.num_workers[%d]: must be >= 0, got %d", j, n)
		}
		total += n
	}
	if total == 0 {
		return fmt.Errorf("instance.num_workers: the cluster needs at least one worker, got %v", inst.NumWorkers)
	}
	if len(inst.Throughputs) != len(inst.Jobs) {
		return fmt.Errorf("instance.throughputs: must have %d rows (one per job), got %d", len(inst.Jobs), len(inst.Throughputs))
	}
	ids := map[int]bool{}
	for i, job := range inst.Jobs {
		if ids[job.ID] {
			return fmt.Errorf("instance.jobs[%d].id: duplicate %d", i, job.ID)
		}
		ids[job.ID] = true
		if job.ScaleFactor < 1 {
			return fmt.Errorf("instance.jobs[%d].scale_factor: must be >= 1, got %d", i, job.ScaleFactor)
		}
		if !(job.PriorityWeight > 0) || math.IsInf(job.PriorityWeight, 0) {
			return fmt.Errorf("instance.jobs[%d].priority_weight: must be > 0 and finite, got %g", i, job.PriorityWeight)
		}
		for name, v := range map[string]float64{"num_steps": job.NumSteps, "steps_remaining": job.StepsRemaining,
			"duration_s": job.DurationSeconds, "arrival_s": job.ArrivalSeconds, "elapsed_s": job.ElapsedSeconds, "slo_s": job.SLOSeconds} {
			if !(v >= 0) || math.IsInf(v, 0) {
				return fmt.Errorf("instance.jobs[%d].%s: must be >= 0 and finite, got %g", i, name, v)
			}
		}
		row := inst.Throughputs[i]
		if len(row) != k {
			return fmt.Errorf("instance.throughputs[%d]: must have %d entries (one per worker type), got %d", i, k, len(row))
		}
		runnable := false
		for j, t := range row {
			if !(t >= 0) || math.IsInf(t, 0) {
				return fmt.Errorf("instance.throughputs[%d][%d]: must be >= 0 and finite, got %g", i, j, t)
			}
			if t > 0 && job.ScaleFactor <= inst.NumWorkers[j] {
				runnable = true
			}
		}
		if !runnable {
			return fmt.Errorf("instance.jobs[%d]: cannot run on any worker type (zero throughput or scale_factor %d above the worker count)", i, job.ScaleFactor)
		}
	}
	if err := validateUnconsolidated(inst); err != nil {
		return err
	}
	if inst.GPUsPerServer != nil {
		if len(inst.GPUsPerServer) != k {
			return fmt.Errorf("instance.gpus_per_server: must have %d entries (one per worker type), got %d", k, len(inst.GPUsPerServer))
		}
		for j, g := range inst.GPUsPerServer {
			if g < 1 || g > MaxWorkersPerType {
				return fmt.Errorf("instance.gpus_per_server[%d]: must be in [1, %d], got %d", j, MaxWorkersPerType, g)
			}
		}
	}
	if inst.PricePerHour != nil {
		if len(inst.PricePerHour) != k {
			return fmt.Errorf("instance.price_per_hour: must have %d entries (one per worker type), got %d", k, len(inst.PricePerHour))
		}
		for j, p := range inst.PricePerHour {
			if !(p > 0) || math.IsInf(p, 0) {
				return fmt.Errorf("instance.price_per_hour[%d]: must be > 0 and finite, got %g", j, p)
			}
		}
	}
	for e, w := range inst.EntityWeights {
		if !(w > 0) || math.IsInf(w, 0) {
			return fmt.Errorf("instance.entity_weights[%q]: must be > 0 and finite, got %g", e, w)
		}
	}
	return validatePairs(inst)
}

// validateUnconsolidated checks Instance.UnconsolidatedThroughputs, if set:
// one row per job with one finite non-negative entry per worker type.
func validateUnconsolidated(inst *Instance) error {
	u := inst.UnconsolidatedThroughputs
	if u == nil {
		return nil
	}
	if len(u) != len(inst.Jobs) {
		return fmt.Errorf("instance.unconsolidated_throughputs: must have %d rows (one per job), got %d", len(inst.Jobs), len(u))
	}
	for i, row := range u {
		if len(row) != len(inst.WorkerTypes) {
			return fmt.Errorf("instance.unconsolidated_throughputs[%d]: must have %d entries (one per worker type), got %d", i, len(inst.WorkerTypes), len(row))
		}
		for j, t := range row {
			if !(t >= 0) || math.IsInf(t, 0) {
				return fmt.Errorf("instance.unconsolidated_throughputs[%d][%d]: must be >= 0 and finite, got %g", i, j, t)
			}
		}
	}
	return nil
}

// validatePairs checks Instance.Pairs: A and B are distinct indices into
// Instance.Jobs with equal scale factors, one finite non-negative [a, b]
// throughput per worker type.
func validatePairs(inst *Instance) error {
	n, k := len(inst.Jobs), len(inst.WorkerTypes)
	for p, pair := range inst.Pairs {
		if pair.A < 0 || pair.A >= n {
			return fmt.Errorf("instance.pairs[%d].a: job index out of range [0,%d), got %d", p, n, pair.A)
		}
		if pair.B < 0 || pair.B >= n || pair.B == pair.A {
			return fmt.Errorf("instance.pairs[%d].b: must be a job index in [0,%d) other than a=%d, got %d", p, n, pair.A, pair.B)
		}
		if sa, sb := inst.Jobs[pair.A].ScaleFactor, inst.Jobs[pair.B].ScaleFactor; sa != sb {
			return fmt.Errorf("instance.pairs[%d]: jobs %d and %d have different scale factors %d and %d", p, pair.A, pair.B, sa, sb)
		}
		if len(pair.Throughputs) != k {
			return fmt.Errorf("instance.pairs[%d].throughputs: must have %d entries (one per worker type), got %d", p, k, len(pair.Throughputs))
		}
		for j, t := range pair.Throughputs {
			for s, v := range t {
				if !(v >= 0) || math.IsInf(v, 0) {
					return fmt.Errorf("instance.pairs[%d].throughputs[%d][%d]: must be >= 0 and finite, got %g", p, j, s, v)
				}
			}
		}
	}
	return nil
}
