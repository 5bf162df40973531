package gavel

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// DefaultReferenceWorkerType is the GPU whose throughput sizes a generated
// job (§5.7.1: "the duration of each job on a V100 GPU").
const DefaultReferenceWorkerType = "v100"

// TraceConfig configures the synthetic trace generator of §5.7.1.
type TraceConfig struct {
	// NumJobs is the number of jobs to generate.
	NumJobs int
	// JobsPerHour is the Poisson arrival rate λ; 0 gives a static trace (all jobs at t=0).
	JobsPerHour float64
	// Seed makes the trace deterministic.
	Seed uint64
	// MultiGPU draws scale factors 1/2/4/8 ("continuous-multiple"); otherwise all are 1.
	MultiGPU bool
	// PriorityWeights gives 20% of the jobs weight 5 (§5.7.3, LAS with priorities).
	PriorityWeights bool
	// SLOs gives every job a deadline of 1.2, 2 or 10 times its duration (p = 1/3 each).
	SLOs bool
	// DurationChoicesSeconds, if set, replaces the duration distribution:
	// each job's duration is drawn uniformly from it (§5.7.3's cost workload
	// uses {0.5, 1, 2, 4, 8} days).
	DurationChoicesSeconds []float64
	// JobTypes to draw from; nil means DefaultJobTable().
	JobTypes []JobType
	// Throughputs to size jobs with; nil means DefaultThroughputs().
	Throughputs *ThroughputTable
	// ReferenceWorkerType is the GPU the durations are drawn for; "" means
	// DefaultReferenceWorkerType. A job that cannot run there is sized on
	// its fastest GPU type.
	ReferenceWorkerType string
	// Templates, if set, replaces the draw of job type and scale factor:
	// each job copies the JobType, ScaleFactor and PriorityWeight (0 means
	// 1) of a template drawn uniformly, e.g. a user's own job list;
	// JobTypes and MultiGPU are then ignored.
	Templates []Job
}

// GenerateTrace draws a synthetic trace as Gavel's simulator does (§5.7.1;
// Gavel's utils.generate_job and scheduler._sample_arrival_time_delta): job
// types uniform over the job table, durations 60·10^U(1.5,3) s w.p. 0.8 else
// 60·10^U(3,4) s on the reference GPU, num_steps = duration × its throughput,
// Poisson arrivals. Job i gets ID i. The job stream is seeded with Seed+2 and
// the arrival stream with Seed+3, like Gavel (its Mersenne Twister draws are
// not reproduced bit for bit).
func GenerateTrace(cfg TraceConfig) ([]Job, error) {
	if cfg.NumJobs < 0 {
		return nil, fmt.Errorf("trace: num_jobs: must be >= 0, got %d", cfg.NumJobs)
	}
	if math.IsNaN(cfg.JobsPerHour) || math.IsInf(cfg.JobsPerHour, 0) || cfg.JobsPerHour < 0 {
		return nil, fmt.Errorf("trace: jobs_per_hour: must be a finite number >= 0, got %v", cfg.JobsPerHour)
	}
	jobTypes := cfg.JobTypes
	if jobTypes == nil {
		jobTypes = DefaultJobTable()
	}
	tt := cfg.Throughputs
	if tt == nil {
		tt = DefaultThroughputs()
	}
	ref := cfg.ReferenceWorkerType
	if ref == "" {
		ref = DefaultReferenceWorkerType
	}
	if len(jobTypes) == 0 && cfg.Templates == nil {
		return nil, fmt.Errorf("trace: job_types: must not be empty")
	}
	for i, t := range cfg.Templates {
		if t.ScaleFactor < 1 {
			return nil, fmt.Errorf("trace: templates[%d].scale_factor: must be >= 1, got %d", i, t.ScaleFactor)
		}
		if !(t.PriorityWeight >= 0) || math.IsInf(t.PriorityWeight, 0) {
			return nil, fmt.Errorf("trace: templates[%d].priority_weight: must be >= 0 and finite, got %v", i, t.PriorityWeight)
		}
	}
	for i, d := range cfg.DurationChoicesSeconds {
		if !(d > 0) || math.IsInf(d, 0) {
			return nil, fmt.Errorf("trace: duration_choices_s[%d]: must be > 0 and finite, got %v", i, d)
		}
	}
	if cfg.MultiGPU && cfg.Templates == nil && !anyDistributed(jobTypes) {
		return nil, fmt.Errorf("trace: multi_gpu: no distributed job type to draw")
	}
	jobRNG := rand.New(rand.NewPCG(cfg.Seed+2, 0))
	arrivalRNG := rand.New(rand.NewPCG(cfg.Seed+3, 0))
	jobs := make([]Job, cfg.NumJobs)
	arrival := 0.0
	for i := range jobs {
		if i > 0 && cfg.JobsPerHour > 0 {
			// Inter-arrival time -ln(1-U)·3600/λ seconds (exponential).
			arrival += -math.Log(1-arrivalRNG.Float64()) * 3600 / cfg.JobsPerHour
		}
		j, err := generateJob(jobRNG, cfg, jobTypes, tt, ref)
		if err != nil {
			return nil, err
		}
		j.ID = i
		j.ArrivalSeconds = arrival
		jobs[i] = j
	}
	return jobs, nil
}

// generateJob draws one job (Gavel's utils.generate_job with
// always_generate_scale_factor), or copies a template's kind.
func generateJob(rng *rand.Rand, cfg TraceConfig, jobTypes []JobType, tt *ThroughputTable, ref string) (Job, error) {
	sf := 1
	if cfg.MultiGPU && cfg.Templates == nil {
		sf = drawScaleFactor(rng)
	}
	duration := drawDurationSeconds(rng)
	if len(cfg.DurationChoicesSeconds) > 0 {
		duration = cfg.DurationChoicesSeconds[rng.IntN(len(cfg.DurationChoicesSeconds))]
	}
	j := Job{PriorityWeight: 1, DurationSeconds: duration}
	if cfg.Templates != nil {
		t := cfg.Templates[rng.IntN(len(cfg.Templates))]
		j.JobType, j.ScaleFactor = t.JobType, t.ScaleFactor
		if t.PriorityWeight > 0 {
			j.PriorityWeight = t.PriorityWeight
		}
	} else {
		jt := jobTypes[rng.IntN(len(jobTypes))]
		for sf > 1 && !jt.Distributed {
			jt = jobTypes[rng.IntN(len(jobTypes))]
		}
		j.JobType, j.ScaleFactor = jt.Model, sf
	}
	tput, err := sizingThroughput(tt, ref, JobKey{Model: j.JobType, ScaleFactor: j.ScaleFactor})
	if err != nil {
		return Job{}, err
	}
	j.NumSteps = math.Max(1, math.Round(duration*tput))
	if cfg.PriorityWeights && rng.Float64() <= 0.2 {
		j.PriorityWeight = 5
	}
	if cfg.SLOs {
		j.SLOSeconds = duration * []float64{1.2, 2, 10}[rng.IntN(3)]
	}
	return j, nil
}

// sizingThroughput is the throughput a job of kind k is sized with: on the
// reference worker type, or on its fastest type where it cannot run there.
func sizingThroughput(tt *ThroughputTable, ref string, k JobKey) (float64, error) {
	tput, err := tt.Isolated(ref, k)
	if err != nil {
		return 0, fmt.Errorf("trace: %w", err)
	}
	if tput <= 0 {
		for _, wt := range tt.baseWorkerTypes() {
			v, _ := tt.Isolated(wt, k)
			tput = max(tput, v)
		}
	}
	if tput <= 0 {
		return 0, fmt.Errorf("trace: %s cannot run on any worker type", k)
	}
	return tput, nil
}

// drawDurationSeconds draws 60·10^U(1.5,3) s w.p. 0.8, else 60·10^U(3,4) s (§5.7.1).
func drawDurationSeconds(rng *rand.Rand) float64 {
	lo, hi := 1.5, 3.0
	if rng.Float64() < 0.2 {
		lo, hi = 3, 4
	}
	return 60 * math.Pow(10, lo+(hi-lo)*rng.Float64())
}

// drawScaleFactor draws the multi-GPU mix of §5.7.1: 1 w.p. 0.7, 2 w.p. 0.1,
// 4 w.p. 0.15, 8 w.p. 0.05 (Gavel's _generate_scale_factor).
func drawScaleFactor(rng *rand.Rand) int {
	r := rng.Float64()
	switch {
	case r >= 0.7 && r <= 0.8:
		return 2
	case r > 0.8 && r <= 0.95:
		return 4
	case r > 0.95:
		return 8
	}
	return 1
}

// anyDistributed reports whether some job type allows scale factors above 1.
func anyDistributed(jobTypes []JobType) bool {
	for _, jt := range jobTypes {
		if jt.Distributed {
			return true
		}
	}
	return false
}
