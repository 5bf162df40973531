package gavel

import (
	"context"
	"fmt"
	"math"
)

// DefaultRoundSeconds is the round length of Gavel's experiments (6 minutes, §5.5).
const DefaultRoundSeconds = 360

// AllocationWorkDivisor scales an allocation's work (SimResult.Work): n
// active jobs add n³ / AllocationWorkDivisor, in units of a round's work
// per active job. Fitted on LAS and FIFO traces of 256 to 2,048 jobs
// (BENCHMARKS.md, "Worst cases"): a LAS allocation of 400 active jobs on
// 32 GPUs takes about as long as 16,000 rounds of one job each.
const AllocationWorkDivisor = 4000

// SimConfig configures a simulation of a trace on a cluster under a policy.
type SimConfig struct {
	// Cluster is the simulated cluster; its worker types must be in Throughputs.
	Cluster ClusterSpec
	// Policy computes allocations; it is called when jobs arrive or complete.
	Policy Policy
	// Jobs is the trace (unique IDs; any order, simulated by arrival time).
	Jobs []Job
	// Throughputs are the true throughputs; nil means DefaultThroughputs().
	Throughputs *ThroughputTable
	// RoundSeconds is the round length; 0 means DefaultRoundSeconds.
	RoundSeconds float64
	// SpaceSharing offers the policy co-located pairs of active jobs (§5.4.2).
	SpaceSharing bool
	// PlacementSensitive gives the policy each multi-GPU job's unconsolidated
	// throughputs (Instance.UnconsolidatedThroughputs, §5.3.1), and the
	// mechanism then realizes the consolidated and unconsolidated shares
	// apart. Without it the policy sees consolidated throughputs only (the
	// simulator still charges unconsolidated placements their throughput).
	PlacementSensitive bool
	// WindowFrom and WindowTo select the steady-state jobs, IDs in
	// [WindowFrom, WindowTo), whose completion times are averaged (§5.7.1);
	// the simulation stops when they have all completed. WindowTo = 0 means
	// every job.
	WindowFrom, WindowTo int
	// PricePerHour is the price of a GPU-hour per worker type (the
	// caller's price list, e.g. gpuprofiles'); nil means none: the cost is
	// reported as 0 and the cost policies cannot run.
	PricePerHour []float64
	// Progress, if set, is called with the number of window jobs completed
	// and the window size whenever jobs complete.
	Progress func(done, total int)
	// MaxWork, if positive, bounds the simulation's work (SimResult.Work):
	// past it Simulate stops with a *WorkLimitError.
	MaxWork int64
}

// WorkLimitError is Simulate's error when the simulation's work passes
// SimConfig.MaxWork.
type WorkLimitError struct {
	// MaxWork is the limit; Seconds the simulated time when it stopped,
	// Completed and Active the jobs completed and active then.
	MaxWork           int64
	Seconds           float64
	Completed, Active int
}

func (e *WorkLimitError) Error() string {
	return fmt.Sprintf("simulate: t=%.0fs: work limit of %d passed with %d jobs completed and %d active", e.Seconds, e.MaxWork, e.Completed, e.Active)
}

// JobOutcome is one completed job.
type JobOutcome struct {
	// ID, JobType and ScaleFactor identify the job as in the trace.
	ID          int    `json:"id"`
	JobType     string `json:"job_type"`
	ScaleFactor int    `json:"scale_factor"`
	// PriorityWeight is the job's weight w_m in fairness policies.
	PriorityWeight float64 `json:"priority_weight"`
	// ArrivalSeconds and FinishSeconds are simulated times since the trace start.
	ArrivalSeconds float64 `json:"arrival_s"`
	FinishSeconds  float64 `json:"finish_s"`
	// JCTSeconds is FinishSeconds - ArrivalSeconds.
	JCTSeconds float64 `json:"jct_s"`
	// FinishTimeFairness is ρ = JCT / time to finish with 1/n of the cluster (§5.4.2, Themis).
	FinishTimeFairness float64 `json:"ftf"`
	// SLOViolated reports a job with an SLO that finished after it.
	SLOViolated bool `json:"slo_violated,omitempty"`
}

// SimResult holds a simulation's metrics (§5.7.1); job-level averages are
// over the window's jobs.
type SimResult struct {
	// Policy is the simulated policy's name.
	Policy string `json:"policy"`
	// WindowJobs is the number of steady-state jobs the averages are over.
	WindowJobs int `json:"window_jobs"`
	// AvgJCTSeconds is the average job completion time of the window's jobs.
	AvgJCTSeconds float64 `json:"avg_jct_s"`
	// MakespanSeconds is the time from the first arrival to the last completion.
	MakespanSeconds float64 `json:"makespan_s"`
	// AvgFTF and MaxFTF summarize finish-time fairness ρ.
	AvgFTF float64 `json:"avg_ftf"`
	MaxFTF float64 `json:"max_ftf"`
	// Utilization is busy GPU-time over available GPU-time during the makespan.
	Utilization float64 `json:"utilization"`
	// UtilizationOverTime is the utilization in at most 200 equal intervals
	// from the first round to the last.
	UtilizationOverTime []UtilizationSample `json:"utilization_over_time,omitempty"`
	// UnconsolidatedShare is the share of multi-GPU jobs' GPU-time that ran
	// unconsolidated (on more servers than needed), at the lower
	// "_unconsolidated" throughput.
	UnconsolidatedShare float64 `json:"unconsolidated_share"`
	// CostDollars prices the busy GPU-time at PricePerHour.
	CostDollars float64 `json:"cost_usd"`
	// JobsWithSLO and SLOViolations count the window's jobs with a deadline and those missing it.
	JobsWithSLO   int `json:"jobs_with_slo"`
	SLOViolations int `json:"slo_violations"`
	// Rounds, Allocations and LeaseRenewals count mechanism events.
	Rounds        int `json:"rounds"`
	Allocations   int `json:"allocations"`
	LeaseRenewals int `json:"lease_renewals"`
	// Work counts the simulation's work deterministically: every round adds
	// its n active jobs (the mechanism ranks them all), and every
	// allocation n³ / AllocationWorkDivisor (the policy's solve grows
	// about so). CPU time follows it within a few times (BENCHMARKS.md,
	// "Worst cases").
	Work int64 `json:"work"`
	// JobsCompleted counts all jobs completed when the simulation stopped.
	JobsCompleted int `json:"jobs_completed"`
	// Jobs are the window's jobs in ID order.
	Jobs []JobOutcome `json:"jobs,omitempty"`
}

// Simulate runs the trace on the cluster (§5.7): at each round boundary it
// admits arrived jobs, recomputes the allocation if jobs arrived or completed
// since the last one, lets the mechanism pick and place micro-tasks, and runs
// each for int(T·round) steps (at least 1), T being its throughput with its
// placement. A round ends when its last micro-task does. It is deterministic
// and stops early with ctx's error when ctx is cancelled.
func Simulate(ctx context.Context, cfg SimConfig) (*SimResult, error) {
	s, err := newSimulation(cfg)
	if err != nil {
		return nil, err
	}
	for !s.windowDone() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := s.step(ctx); err != nil {
			return nil, err
		}
	}
	return s.result(), nil
}

// step admits arrivals and simulates one round (or jumps to the next arrival
// when the cluster is empty).
func (s *simulation) step(ctx context.Context) error {
	s.admit()
	if len(s.active) == 0 {
		if s.next >= len(s.jobs) {
			return fmt.Errorf("simulate: window jobs cannot complete: no job left to run")
		}
		s.now = s.jobs[s.next].job.ArrivalSeconds
		return nil
	}
	n := int64(len(s.active))
	s.work += n
	if s.changed {
		s.work += n * n * n / AllocationWorkDivisor
	}
	if s.cfg.MaxWork > 0 && s.work > s.cfg.MaxWork {
		return &WorkLimitError{MaxWork: s.cfg.MaxWork, Seconds: s.now, Completed: s.completed, Active: len(s.active)}
	}
	if s.changed {
		if err := s.reallocate(ctx); err != nil {
			return err
		}
	}
	combos := s.combinations()
	placements, err := s.mech.Schedule(combos)
	if err != nil {
		return fmt.Errorf("simulate: t=%.0fs: %w", s.now, err)
	}
	if len(placements) == 0 {
		return fmt.Errorf("simulate: t=%.0fs: no active job can be placed", s.now)
	}
	s.runRound(combos, placements)
	return nil
}

// runRound executes one round's micro-tasks and retires completed jobs.
func (s *simulation) runRound(combos []Combination, placements []Placement) {
	start, count := s.now, float64(len(s.active))
	end, busy := start, 0.0
	for _, p := range placements {
		c := combos[p.Combination]
		seconds := s.runMicroTask(c, p, start, count)
		s.mech.Record(c, p, seconds)
		s.busyGPUSeconds[p.WorkerType] += seconds * float64(c.ScaleFactor)
		if c.ScaleFactor > 1 {
			s.multiGPUSeconds += seconds * float64(c.ScaleFactor)
			if !p.Consolidated {
				s.spreadGPUSeconds += seconds * float64(c.ScaleFactor)
			}
		}
		busy += seconds * float64(c.ScaleFactor)
		if p.LeaseRenewed {
			s.leaseRenewals++
		}
		end = math.Max(end, start+seconds)
	}
	s.activeJobSeconds += count * (end - start)
	s.roundLog = append(s.roundLog, roundUsage{start: start, end: end, busyGPUSeconds: busy})
	s.now = end
	s.rounds++
	s.retire()
}

// runMicroTask advances c's jobs for one round on p and returns how long the
// micro-task ran; jobs that finish get their finish time.
func (s *simulation) runMicroTask(c Combination, p Placement, start, activeCount float64) float64 {
	seconds := 0.0
	for i, id := range c.JobIDs {
		j := s.byID[id]
		tput := s.throughputOn(c, i, p)
		if tput <= 0 {
			// Only an unconsolidated placement can have zero throughput here; the
			// GPUs are held but the job cannot progress this round. The first
			// combination placed in a round sees every GPU free and is always
			// consolidated, so some job progresses in every round.
			seconds = s.roundSeconds
			continue
		}
		steps := math.Min(j.remaining, math.Max(1, math.Floor(tput*s.roundSeconds)))
		run := steps / tput
		j.remaining -= steps
		if j.remaining <= 0 {
			j.remaining = 0
			j.finish = start + run
			j.activeSecondsAtFinish = s.activeJobSeconds + activeCount*run
			j.done = true
		}
		seconds = math.Max(seconds, run)
	}
	return seconds
}

// throughputOn is the throughput of the i-th job of c placed as p: the
// co-located value for a pair, else the isolated one for p's consolidation.
func (s *simulation) throughputOn(c Combination, i int, p Placement) float64 {
	j := s.byID[c.JobIDs[i]]
	if len(c.JobIDs) == 2 {
		return s.pairTput[[2]int{c.JobIDs[0], c.JobIDs[1]}][p.WorkerType][i]
	}
	if p.Consolidated {
		return j.tput[p.WorkerType]
	}
	return j.tputSpread[p.WorkerType]
}
