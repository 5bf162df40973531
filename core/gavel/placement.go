package gavel

import (
	"fmt"
	"maps"
	"slices"
)

// placementSensitive reports whether the policy named name sees
// consolidated and unconsolidated placements apart on inst: the instance
// must carry unconsolidated throughputs, and the policy must be
// heterogeneity-aware (an agnostic policy sees every GPU, and so every
// placement, as equal).
func placementSensitive(name string, inst *Instance) bool {
	return inst.UnconsolidatedThroughputs != nil && registry[name].info.HeterogeneityAware
}

// withPlacements models placement sensitivity as §5.3.1 describes: every
// worker type w gets a second column, w+"_unconsolidated", with the
// unconsolidated throughputs, and both columns share w's GPUs (capacityOf).
// Consolidation is limited by the servers: at most consolidatedSlots jobs
// of each multi-GPU scale factor run consolidated on a type at once
// (consolidatedCaps, rows of the allocation LP), so when the servers fill
// up a policy chooses which jobs run spread, at their unconsolidated
// throughput. A job can run unconsolidated only on a type with more
// servers than it needs consolidated. Policies then decide how much of
// each job's time runs consolidated. Pairs and single-GPU jobs only run
// consolidated.
func (inst *Instance) withPlacements() *Instance {
	k := len(inst.WorkerTypes)
	ex := *inst
	ex.UnconsolidatedThroughputs = nil
	ex.WorkerTypes = slices.Clone(inst.WorkerTypes)
	for _, w := range inst.WorkerTypes {
		ex.WorkerTypes = append(ex.WorkerTypes, w+UnconsolidatedSuffix)
	}
	ex.NumWorkers = append(slices.Clone(inst.NumWorkers), inst.NumWorkers...)
	ex.capacityOf = make([]int, 2*k)
	for j := range ex.capacityOf {
		ex.capacityOf[j] = j % k
	}
	if inst.PricePerHour != nil {
		ex.PricePerHour = append(slices.Clone(inst.PricePerHour), inst.PricePerHour...)
	}
	if inst.GPUsPerServer != nil {
		ex.GPUsPerServer = append(slices.Clone(inst.GPUsPerServer), inst.GPUsPerServer...)
	}
	ex.Throughputs = make([][]float64, len(inst.Jobs))
	scales := map[int]bool{}
	for m, row := range inst.Throughputs {
		spread := make([]float64, k)
		if s := inst.Jobs[m].ScaleFactor; s > 1 {
			scales[s] = true
			for j := range k {
				size := serverSizeOf(inst.GPUsPerServer, j)
				if minServers(size, inst.NumWorkers[j]) > minServers(size, s) {
					spread[j] = inst.UnconsolidatedThroughputs[m][j]
				}
			}
		}
		ex.Throughputs[m] = append(slices.Clone(row), spread...)
	}
	ex.consolidatedCaps = nil
	for _, s := range slices.Sorted(maps.Keys(scales)) {
		for j, n := range inst.NumWorkers {
			if gpus := s * consolidatedSlots(n, serverSizeOf(inst.GPUsPerServer, j), s); gpus < n {
				ex.consolidatedCaps = append(ex.consolidatedCaps, consolidatedCap{column: j, scale: s, gpus: float64(gpus)})
			}
		}
	}
	ex.Pairs = make([]Pair, len(inst.Pairs))
	for p, pair := range inst.Pairs {
		ex.Pairs[p] = pair
		ex.Pairs[p].Throughputs = append(slices.Clone(pair.Throughputs), make([][2]float64, k)...)
	}
	return &ex
}

// consolidatedCap bounds the GPUs that jobs of one scale factor may use
// consolidated on one worker type: sum over those jobs m of scale*X[m][column]
// <= gpus (placement sensitivity, withPlacements).
type consolidatedCap struct {
	column, scale int
	gpus          float64
}

// foldPlacements turns an allocation of inst.withPlacements() back into
// one over inst's k worker types: X keeps the consolidated columns and
// UnconsolidatedX gets the others (pairs never run unconsolidated).
func foldPlacements(k int, al *Allocation) {
	al.UnconsolidatedX = make([][]float64, len(al.X))
	for m, row := range al.X {
		al.X[m], al.UnconsolidatedX[m] = row[:k:k], row[k:]
	}
	for p, row := range al.PairX {
		al.PairX[p] = row[:k:k]
	}
}

// capacityType returns the worker type whose GPUs type j uses (j itself
// unless the instance was expanded by withPlacements).
func (inst *Instance) capacityType(j int) int {
	if inst.capacityOf == nil {
		return j
	}
	return inst.capacityOf[j]
}

// UnconsolidatedFromTable sets inst.UnconsolidatedThroughputs from a
// throughput table's "_unconsolidated" measurements (ThroughputTable.Placed),
// making heterogeneity-aware policies placement-sensitive. Jobs need their
// JobType; single-GPU jobs get zeros (they are always consolidated).
func UnconsolidatedFromTable(inst *Instance, tt *ThroughputTable) error {
	u := make([][]float64, len(inst.Jobs))
	for m, job := range inst.Jobs {
		u[m] = make([]float64, len(inst.WorkerTypes))
		if job.ScaleFactor == 1 {
			continue
		}
		for j, w := range inst.WorkerTypes {
			v, err := tt.Placed(w, JobKey{Model: job.JobType, ScaleFactor: job.ScaleFactor}, false)
			if err != nil {
				return fmt.Errorf("instance.jobs[%d]: %w", m, err)
			}
			u[m][j] = v
		}
	}
	old := inst.UnconsolidatedThroughputs
	inst.UnconsolidatedThroughputs = u
	if err := validateUnconsolidated(inst); err != nil {
		inst.UnconsolidatedThroughputs = old
		return err
	}
	return nil
}

// EffectiveThroughputs returns each job's throughput under al, in steps/s
// (§5.3.1, eq. 5.1): its time on each worker type at its isolated
// throughput, its co-located pairs' time at the pair throughputs, and its
// unconsolidated time at the unconsolidated throughputs.
func EffectiveThroughputs(inst *Instance, al *Allocation) []float64 {
	eff := effectiveThroughputs(inst, inst.Throughputs, al)
	if inst.UnconsolidatedThroughputs == nil {
		return eff
	}
	for m, row := range al.UnconsolidatedX {
		for j, x := range row {
			eff[m] += x * inst.UnconsolidatedThroughputs[m][j]
		}
	}
	return eff
}
