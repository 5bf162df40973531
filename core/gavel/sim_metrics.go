package gavel

import (
	"math"
	"sort"
)

// result computes the metrics of a finished simulation (§5.7.1).
func (s *simulation) result() *SimResult {
	r := &SimResult{Policy: s.cfg.Policy.Name(), Rounds: s.rounds, Allocations: s.allocations,
		LeaseRenewals: s.leaseRenewals, Work: s.work, JobsCompleted: s.completed}
	first, last := math.Inf(1), 0.0
	for _, j := range s.jobs {
		if !j.done {
			continue
		}
		first = math.Min(first, j.job.ArrivalSeconds)
		last = math.Max(last, j.finish)
		if !s.inWindow(j.job.ID) {
			continue
		}
		o := s.outcome(j)
		r.Jobs = append(r.Jobs, o)
		r.AvgJCTSeconds += o.JCTSeconds
		r.AvgFTF += o.FinishTimeFairness
		r.MaxFTF = math.Max(r.MaxFTF, o.FinishTimeFairness)
		if j.job.SLOSeconds > 0 {
			r.JobsWithSLO++
			if o.SLOViolated {
				r.SLOViolations++
			}
		}
	}
	r.WindowJobs = len(r.Jobs)
	r.AvgJCTSeconds /= float64(r.WindowJobs)
	r.AvgFTF /= float64(r.WindowJobs)
	r.MakespanSeconds = last - first
	prices := s.prices()
	busy := 0.0
	for w, sec := range s.busyGPUSeconds {
		busy += sec
		r.CostDollars += sec / 3600 * prices[w]
	}
	if r.MakespanSeconds > 0 {
		r.Utilization = busy / (float64(s.cfg.Cluster.TotalWorkers()) * r.MakespanSeconds)
	}
	if s.multiGPUSeconds > 0 {
		r.UnconsolidatedShare = s.spreadGPUSeconds / s.multiGPUSeconds
	}
	r.UtilizationOverTime = utilizationSeries(s.roundLog, s.cfg.Cluster.TotalWorkers())
	sort.Slice(r.Jobs, func(a, b int) bool { return r.Jobs[a].ID < r.Jobs[b].ID })
	return r
}

// outcome summarizes completed job j.
func (s *simulation) outcome(j *simJob) JobOutcome {
	jct := j.finish - j.job.ArrivalSeconds
	return JobOutcome{
		ID: j.job.ID, JobType: j.job.JobType, ScaleFactor: j.job.ScaleFactor, PriorityWeight: j.job.PriorityWeight,
		ArrivalSeconds: j.job.ArrivalSeconds, FinishSeconds: j.finish, JCTSeconds: jct,
		FinishTimeFairness: jct / (j.job.NumSteps / s.isolatedThroughput(j)),
		SLOViolated:        j.job.SLOSeconds > 0 && jct > j.job.SLOSeconds,
	}
}

// isolatedThroughput is j's throughput(m, X^isolated) (isolatedThroughput)
// with n the mean number of active jobs while j was in the cluster (at
// least 1).
func (s *simulation) isolatedThroughput(j *simJob) float64 {
	n := 1.0
	if life := j.finish - j.admitted; life > 0 {
		n = math.Max(1, (j.activeSecondsAtFinish-j.activeSecondsAtAdmit)/life)
	}
	return isolatedThroughput(j.tput, s.cfg.Cluster.NumWorkers, j.job.ScaleFactor, n)
}
