package gavel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// simJob is a job's state during a simulation.
type simJob struct {
	job Job
	key JobKey
	// tput and tputSpread are the throughputs per worker type with
	// consolidated and unconsolidated placement.
	tput, tputSpread []float64
	remaining        float64
	admitted         float64
	// activeSecondsAtAdmit/Finish sample ∫ (active jobs) dt, for the mean
	// number of jobs sharing the cluster during the job's life (FTF).
	activeSecondsAtAdmit, activeSecondsAtFinish float64
	finish                                      float64
	done                                        bool
}

// simulation is the state of one Simulate call.
type simulation struct {
	cfg          SimConfig
	tt           *ThroughputTable
	roundSeconds float64
	mech         *Mechanism
	jobs         []*simJob // by arrival time
	byID         map[int]*simJob
	next         int       // first job not yet admitted
	active       []*simJob // admitted, not done, in admission order
	changed      bool
	now          float64
	alloc        *Allocation
	inst         *Instance
	// pairTput holds the offered pairs' co-located throughputs per worker type.
	pairTput map[[2]int][][2]float64

	windowFrom, windowTo, windowLeft, windowSize int
	completed                                    int
	busyGPUSeconds                               []float64
	multiGPUSeconds, spreadGPUSeconds            float64
	roundLog                                     []roundUsage
	activeJobSeconds                             float64
	rounds, allocations, leaseRenewals           int
	work                                         int64
}

// newSimulation validates cfg and resolves every job's throughputs.
func newSimulation(cfg SimConfig) (*simulation, error) {
	if err := cfg.Cluster.Validate(); err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	if cfg.Policy == nil {
		return nil, fmt.Errorf("simulate: policy: must be set")
	}
	if len(cfg.Jobs) == 0 {
		return nil, fmt.Errorf("simulate: jobs: must not be empty")
	}
	s := &simulation{cfg: cfg, tt: cfg.Throughputs, roundSeconds: cfg.RoundSeconds, byID: map[int]*simJob{},
		pairTput: map[[2]int][][2]float64{}, busyGPUSeconds: make([]float64, len(cfg.Cluster.WorkerTypes))}
	if s.tt == nil {
		s.tt = DefaultThroughputs()
	}
	known := s.tt.WorkerTypes()
	for j, wt := range cfg.Cluster.WorkerTypes {
		if !slices.Contains(known, wt) {
			return nil, fmt.Errorf("simulate: cluster.worker_types[%d]: unknown worker type %q (known: %v)", j, wt, known)
		}
	}
	if s.roundSeconds == 0 {
		s.roundSeconds = DefaultRoundSeconds
	}
	mech, err := NewMechanism(cfg.Cluster, s.roundSeconds)
	if err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	s.mech = mech
	if cfg.PricePerHour != nil && len(cfg.PricePerHour) != len(cfg.Cluster.WorkerTypes) {
		return nil, fmt.Errorf("simulate: price_per_hour: must have %d entries, got %d", len(cfg.Cluster.WorkerTypes), len(cfg.PricePerHour))
	}
	for i, p := range cfg.PricePerHour {
		if !(p >= 0) || math.IsInf(p, 0) {
			return nil, fmt.Errorf("simulate: price_per_hour[%d]: must be >= 0 and finite, got %v", i, p)
		}
	}
	for i := range cfg.Jobs {
		j, err := s.newSimJob(i, cfg.Jobs[i])
		if err != nil {
			return nil, err
		}
		if s.byID[j.job.ID] != nil {
			return nil, fmt.Errorf("simulate: jobs[%d].id: duplicate %d", i, j.job.ID)
		}
		s.byID[j.job.ID] = j
		s.jobs = append(s.jobs, j)
	}
	sort.SliceStable(s.jobs, func(a, b int) bool { return s.jobs[a].job.ArrivalSeconds < s.jobs[b].job.ArrivalSeconds })
	return s, s.setWindow()
}

// newSimJob checks trace job i and looks up its throughputs.
func (s *simulation) newSimJob(i int, job Job) (*simJob, error) {
	field := fmt.Sprintf("simulate: jobs[%d]", i)
	if job.ScaleFactor < 1 {
		return nil, fmt.Errorf("%s.scale_factor: must be >= 1, got %d", field, job.ScaleFactor)
	}
	if !(job.NumSteps > 0) || math.IsInf(job.NumSteps, 0) {
		return nil, fmt.Errorf("%s.num_steps: must be > 0 and finite, got %v", field, job.NumSteps)
	}
	if !(job.ArrivalSeconds >= 0) || math.IsInf(job.ArrivalSeconds, 0) {
		return nil, fmt.Errorf("%s.arrival_s: must be >= 0 and finite, got %v", field, job.ArrivalSeconds)
	}
	if !(job.PriorityWeight > 0) || math.IsInf(job.PriorityWeight, 0) {
		return nil, fmt.Errorf("%s.priority_weight: must be > 0 and finite, got %v", field, job.PriorityWeight)
	}
	j := &simJob{job: job, key: JobKey{job.JobType, job.ScaleFactor}, remaining: job.NumSteps}
	runnable := false
	for w, wt := range s.cfg.Cluster.WorkerTypes {
		cons, err := s.tt.Isolated(wt, j.key)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		spread, _ := s.tt.Placed(wt, j.key, false)
		j.tput = append(j.tput, cons)
		j.tputSpread = append(j.tputSpread, spread)
		runnable = runnable || (cons > 0 && job.ScaleFactor <= s.cfg.Cluster.NumWorkers[w])
	}
	if !runnable {
		return nil, fmt.Errorf("%s: %s cannot run on this cluster (zero throughput or too few GPUs on every worker type)", field, j.key)
	}
	return j, nil
}

// setWindow resolves the steady-state window of job IDs.
func (s *simulation) setWindow() error {
	s.windowFrom, s.windowTo = s.cfg.WindowFrom, s.cfg.WindowTo
	if s.windowTo == 0 && s.windowFrom == 0 {
		s.windowFrom, s.windowTo = math.MinInt, math.MaxInt
	}
	if s.windowFrom >= s.windowTo {
		return fmt.Errorf("simulate: window: from must be < to, got %d:%d", s.cfg.WindowFrom, s.cfg.WindowTo)
	}
	for _, j := range s.jobs {
		if s.inWindow(j.job.ID) {
			s.windowSize++
		}
	}
	if s.windowSize == 0 {
		return fmt.Errorf("simulate: window %d:%d: holds no job of the trace", s.cfg.WindowFrom, s.cfg.WindowTo)
	}
	s.windowLeft = s.windowSize
	return nil
}

func (s *simulation) inWindow(id int) bool { return id >= s.windowFrom && id < s.windowTo }

func (s *simulation) windowDone() bool { return s.windowLeft == 0 }

// admit moves jobs that have arrived by now into the active set.
func (s *simulation) admit() {
	for s.next < len(s.jobs) && s.jobs[s.next].job.ArrivalSeconds <= s.now {
		j := s.jobs[s.next]
		j.admitted = s.now
		j.activeSecondsAtAdmit = s.activeJobSeconds
		s.active = append(s.active, j)
		s.next++
		s.changed = true
	}
}

// retire removes completed jobs from the active set.
func (s *simulation) retire() {
	kept := s.active[:0]
	for _, j := range s.active {
		if !j.done {
			kept = append(kept, j)
			continue
		}
		s.completed++
		s.changed = true
		if s.inWindow(j.job.ID) {
			s.windowLeft--
		}
	}
	clear(s.active[len(kept):])
	s.active = kept
	if s.changed && s.cfg.Progress != nil {
		s.cfg.Progress(s.windowSize-s.windowLeft, s.windowSize)
	}
}

// reallocate builds the instance of the active jobs and asks the policy.
func (s *simulation) reallocate(ctx context.Context) error {
	c := s.cfg.Cluster
	inst := &Instance{WorkerTypes: c.WorkerTypes, NumWorkers: c.NumWorkers, GPUsPerServer: c.GPUsPerServer, PricePerHour: s.instancePrices()}
	for _, j := range s.active {
		job := j.job
		job.StepsRemaining = j.remaining
		job.ElapsedSeconds = s.now - job.ArrivalSeconds
		inst.Jobs = append(inst.Jobs, job)
		inst.Throughputs = append(inst.Throughputs, j.tput)
		if s.cfg.PlacementSensitive {
			spread := make([]float64, len(j.tputSpread))
			if job.ScaleFactor > 1 {
				copy(spread, j.tputSpread)
			}
			inst.UnconsolidatedThroughputs = append(inst.UnconsolidatedThroughputs, spread)
		}
	}
	if s.cfg.SpaceSharing {
		if err := PairsFromTable(inst, s.tt); err != nil {
			return fmt.Errorf("simulate: t=%.0fs: space sharing: %w", s.now, err)
		}
	}
	alloc, err := s.cfg.Policy.Allocate(ctx, inst)
	// SLOs that cannot all be met: best effort without the tightest (RelaxSLOs).
	for errors.Is(err, ErrSLOsUnmet) && RelaxSLOs(inst) {
		alloc, err = s.cfg.Policy.Allocate(ctx, inst)
	}
	if err != nil {
		return fmt.Errorf("simulate: t=%.0fs: %w", s.now, err)
	}
	if err := checkAllocation(inst, alloc); err != nil {
		return fmt.Errorf("simulate: t=%.0fs: policy %s: %w", s.now, s.cfg.Policy.Name(), err)
	}
	s.inst, s.alloc = inst, alloc
	s.mech.Reset()
	s.changed = false
	s.allocations++
	return nil
}

// instancePrices returns the price per worker type if every type has a
// positive one (cost policies need them), else nil.
func (s *simulation) instancePrices() []float64 {
	prices := s.prices()
	for _, p := range prices {
		if p <= 0 {
			return nil
		}
	}
	return prices
}

// prices returns the configured price per worker type, 0s when none is.
func (s *simulation) prices() []float64 {
	if s.cfg.PricePerHour != nil {
		return s.cfg.PricePerHour
	}
	return make([]float64, len(s.cfg.Cluster.WorkerTypes))
}

// combinations turns the current allocation into the mechanism's input (the
// allocation is always recomputed after jobs complete, so all are active).
func (s *simulation) combinations() []Combination {
	k := len(s.cfg.Cluster.WorkerTypes)
	combos := make([]Combination, 0, len(s.inst.Jobs)+len(s.inst.Pairs))
	clear(s.pairTput)
	for i, job := range s.inst.Jobs {
		j := s.byID[job.ID]
		run := make([]bool, k)
		for w := range run {
			run[w] = j.tput[w] > 0
		}
		c := Combination{JobIDs: []int{job.ID}, ScaleFactor: job.ScaleFactor, X: s.alloc.X[i], Runnable: run}
		if s.alloc.UnconsolidatedX != nil {
			c.UnconsolidatedX = s.alloc.UnconsolidatedX[i]
		}
		combos = append(combos, c)
	}
	for p, pair := range s.inst.Pairs {
		a, b := s.inst.Jobs[pair.A], s.inst.Jobs[pair.B]
		if s.alloc.PairX == nil {
			break
		}
		run := make([]bool, k)
		for w := range run {
			run[w] = pair.Throughputs[w][0] > 0 && pair.Throughputs[w][1] > 0
		}
		combos = append(combos, Combination{JobIDs: []int{a.ID, b.ID}, ScaleFactor: a.ScaleFactor, X: s.alloc.PairX[p], Runnable: run})
		s.pairTput[[2]int{a.ID, b.ID}] = pair.Throughputs
	}
	return combos
}

// checkAllocation rejects allocations of the wrong shape or with values
// outside [0, 1] (a small tolerance allowed for solver round-off).
func checkAllocation(inst *Instance, alloc *Allocation) error {
	if alloc == nil {
		return fmt.Errorf("returned no allocation")
	}
	k := len(inst.WorkerTypes)
	check := func(name string, rows [][]float64, n int) error {
		if len(rows) != n {
			return fmt.Errorf("%s: want %d rows, got %d", name, n, len(rows))
		}
		for i, row := range rows {
			if len(row) != k {
				return fmt.Errorf("%s[%d]: want %d entries, got %d", name, i, k, len(row))
			}
			for j, v := range row {
				if !(v >= -1e-6 && v <= 1+1e-6) {
					return fmt.Errorf("%s[%d][%d]: must be in [0, 1], got %v", name, i, j, v)
				}
				row[j] = math.Min(1, math.Max(0, v))
			}
		}
		return nil
	}
	if err := check("allocation", alloc.X, len(inst.Jobs)); err != nil {
		return err
	}
	if alloc.UnconsolidatedX != nil {
		if err := check("unconsolidated_allocation", alloc.UnconsolidatedX, len(inst.Jobs)); err != nil {
			return err
		}
	}
	if alloc.PairX != nil {
		return check("pair_allocation", alloc.PairX, len(inst.Pairs))
	}
	return nil
}
