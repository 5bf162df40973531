package request

import (
	"fmt"
	"math"
	"unicode/utf8"
)

// Workloads of the Cluster page: the 3-job example of dissertation §5.4.1
// (fixed throughputs on one V100 and one K80), or a job list of Gavel's
// measured job types on V100/P100/K80 GPUs.
const (
	WorkloadPaper    = "paper-3job"
	WorkloadJobTypes = "job-types"
)

// Trace workloads of the Cluster page's simulation: jobs of Gavel's 26 job
// types (the default, as in §5.7.1), or of the jobs listed on the page.
const (
	TraceGavelJobTypes = ""
	TraceListedJobs    = "listed"
)

// WorkerTypes returns the GPU types of a workload, in the order of Cluster.GPUs.
func WorkerTypes(workload string) []string {
	if workload == WorkloadPaper {
		return []string{"v100", "k80"}
	}
	return []string{"v100", "p100", "k80"}
}

// Limits of the Cluster page's inputs.
const (
	MaxClusterGPUs = 4096
	MaxJobs        = 64
	MaxJobWeight   = 100
	MaxTraceJobs   = 2048
	MaxJobsPerHour = 1000
	MaxJobSteps    = 1e12
	MaxSLOHours    = 1e6
)

// Cluster holds the Cluster page's inputs.
type Cluster struct {
	// Workload is WorkloadPaper or WorkloadJobTypes.
	Workload string `json:"workload"`
	// GPUs is the number of GPUs per worker type (WorkerTypes order).
	GPUs []int `json:"gpus"`
	// Jobs is the job list of the job-types workload.
	Jobs []Job `json:"jobs"`
	// Policy is a Gavel policy name (gavel.PolicyNames).
	Policy string `json:"policy"`
	// TraceJobs is the number of jobs of a simulated trace.
	TraceJobs int `json:"trace_jobs"`
	// TraceJobsPerHour is the trace's Poisson arrival rate.
	TraceJobsPerHour float64 `json:"trace_jobs_per_hour"`
	// PlacementSensitive gives the heterogeneity-aware policies each
	// multi-GPU job's throughput with its GPUs on separate servers, so they
	// choose consolidated and unconsolidated time apart (§5.3.1). Omitted
	// when false, so links made before it existed still decode.
	PlacementSensitive bool `json:"placement_sensitive,omitempty"`
	// TraceWorkload is what the simulated trace's jobs are drawn from:
	// TraceGavelJobTypes or TraceListedJobs. Omitted when Gavel's, so links
	// made before it existed still decode.
	TraceWorkload string `json:"trace_workload,omitempty"`
}

// Job is one job of the job-types workload.
type Job struct {
	// Type is a model string of Gavel's job table, e.g. "ResNet-50 (batch size 64)".
	Type string `json:"type"`
	// Scale is the job's scale factor (GPUs used at once).
	Scale int `json:"scale"`
	// Weight is the job's priority weight.
	Weight float64 `json:"weight"`
	// Steps is the job's total number of training steps (0 = not given);
	// the makespan, finish-time fairness, SJF and cost/SLO policies need it.
	Steps float64 `json:"steps,omitempty"`
	// SLOHours is the job's deadline in hours from now (0 = none), for the
	// cost/SLO policies (§6.4.3).
	SLOHours float64 `json:"slo_hours,omitempty"`
	// Planned, when set, is the Plan page's inputs this job was added from:
	// its throughput on each GPU type is the planner's prediction, not a
	// row of Gavel's measured table, and Type is only its label.
	Planned *Plan `json:"planned,omitempty"`
}

// DefaultCluster is the §5.4.1 example under max-min fairness.
func DefaultCluster() Cluster {
	return Cluster{
		Workload: WorkloadPaper,
		GPUs:     []int{1, 1},
		Jobs: []Job{
			{Type: "ResNet-50 (batch size 64)", Scale: 1, Weight: 1},
			{Type: "Transformer (batch size 128)", Scale: 1, Weight: 1},
			{Type: "A3C", Scale: 1, Weight: 1},
			{Type: "LM (batch size 20)", Scale: 2, Weight: 1},
		},
		Policy:           "max_min_fairness_perf",
		TraceJobs:        30,
		TraceJobsPerHour: 4,
	}
}

// Validate checks the Cluster page's inputs; errors name the field and value.
func (c Cluster) Validate() error {
	if c.Workload != WorkloadPaper && c.Workload != WorkloadJobTypes {
		return fmt.Errorf("cluster.workload: must be %q or %q, got %q", WorkloadPaper, WorkloadJobTypes, c.Workload)
	}
	if want := len(WorkerTypes(c.Workload)); len(c.GPUs) != want {
		return fmt.Errorf("cluster.gpus: must have %d counts (%v), got %d", want, WorkerTypes(c.Workload), len(c.GPUs))
	}
	total := 0
	for i, n := range c.GPUs {
		if err := intIn(fmt.Sprintf("cluster.gpus[%d]", i), n, 0, MaxClusterGPUs); err != nil {
			return err
		}
		total += n
	}
	if total == 0 {
		return fmt.Errorf("cluster.gpus: need at least one GPU in all, got %v", c.GPUs)
	}
	if len(c.Jobs) > MaxJobs {
		return fmt.Errorf("cluster.jobs: at most %d jobs, got %d", MaxJobs, len(c.Jobs))
	}
	for i, j := range c.Jobs {
		if j.Type == "" || len(j.Type) > 100 || !utf8.ValidString(j.Type) {
			return fmt.Errorf("cluster.jobs[%d].type: must name a job type, got %q", i, j.Type)
		}
		if j.Scale != 1 && j.Scale != 2 && j.Scale != 4 && j.Scale != 8 {
			return fmt.Errorf("cluster.jobs[%d].scale: must be 1, 2, 4 or 8, got %d", i, j.Scale)
		}
		if math.IsNaN(j.Weight) || j.Weight <= 0 || j.Weight > MaxJobWeight {
			return fmt.Errorf("cluster.jobs[%d].weight: must be in (0, %d], got %v", i, MaxJobWeight, j.Weight)
		}
		if math.IsNaN(j.Steps) || j.Steps < 0 || j.Steps > MaxJobSteps {
			return fmt.Errorf("cluster.jobs[%d].steps: must be in [0, %g], got %v", i, float64(MaxJobSteps), j.Steps)
		}
		if math.IsNaN(j.SLOHours) || j.SLOHours < 0 || j.SLOHours > MaxSLOHours {
			return fmt.Errorf("cluster.jobs[%d].slo_hours: must be in [0, %g], got %v", i, float64(MaxSLOHours), j.SLOHours)
		}
		if j.Planned != nil {
			if err := j.Planned.Validate(); err != nil {
				return fmt.Errorf("cluster.jobs[%d].planned: %w", i, err)
			}
		}
	}
	if err := intIn("cluster.trace_jobs", c.TraceJobs, 1, MaxTraceJobs); err != nil {
		return err
	}
	if math.IsNaN(c.TraceJobsPerHour) || c.TraceJobsPerHour <= 0 || c.TraceJobsPerHour > MaxJobsPerHour {
		return fmt.Errorf("cluster.trace_jobs_per_hour: must be in (0, %d], got %v", MaxJobsPerHour, c.TraceJobsPerHour)
	}
	if c.TraceWorkload != TraceGavelJobTypes && c.TraceWorkload != TraceListedJobs {
		return fmt.Errorf("cluster.trace_workload: must be %q (Gavel's job types) or %q, got %q", TraceGavelJobTypes, TraceListedJobs, c.TraceWorkload)
	}
	if c.Policy == "" || len(c.Policy) > 64 || !utf8.ValidString(c.Policy) {
		return fmt.Errorf("cluster.policy: must name a policy, got %q", c.Policy)
	}
	return nil
}
