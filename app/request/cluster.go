package request

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"pipeplan/core/gavel"
	"pipeplan/gpuprofiles"
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

// WorkerTypes returns the GPU types of a workload, in the order of
// Cluster.GPUs: the §5.4.1 example's one V100 and one K80, else Gavel's
// worker types (gpuprofiles.GavelWorkerTypeNames).
func WorkerTypes(workload string) []string {
	if workload == WorkloadPaper {
		return []string{"v100", "k80"}
	}
	return gpuprofiles.GavelWorkerTypeNames()
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
	// MaxPlannedRuns bounds the planner runs behind a cluster's planned
	// jobs (PlannedRuns): every one is planned on every GPU type, and a
	// multi-GPU one again with its GPUs on separate servers. One run takes
	// up to about a second of CPU (GNMT-16's profile on 1,024 GPUs, a
	// 256-layer MoE model's PTD-P search), so 64 planned jobs on 8 types
	// asked for 1,024 of them (BENCHMARKS.md, "Worst cases").
	MaxPlannedRuns = 16
	// MaxPackedTraceJobs bounds the simulated trace of a space-sharing
	// ("_packed") policy: with many jobs active at once it solves the
	// per-job LP over every pair of them, and 2,048 jobs at 1,000 an hour
	// on 36 GPUs of each type took 1.9 GB and over 150 s of CPU before it
	// was stopped (BENCHMARKS.md, "Worst cases").
	MaxPackedTraceJobs = 256
	// MaxSimulationWork bounds the work of the page's and the API's trace
	// simulation (gavel.SimResult.Work: active jobs summed over rounds and,
	// weighted, over allocations). Jobs arriving faster than the cluster
	// finishes them pile up, and every round and allocation then goes over
	// all of them: 2,048 jobs at 1,000 an hour under LAS took 13 s of CPU on
	// 4,096 GPUs of each type and over 148 s on the default 32 GPUs. At
	// this limit a simulation stops after about a second of native CPU
	// (BENCHMARKS.md, "Worst cases"); `pipeplan gavel simulate` has none.
	MaxSimulationWork = 100_000
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
	// WorkerTypes, set for the job-types workload, are its GPU types in
	// the order of GPUs: Gavel's names (v100, p100, k80) or any gpus.json
	// id (gpuprofiles.WorkerTypeGPU); omitted means Gavel's three, so links
	// made before it existed still decode.
	WorkerTypes []string `json:"worker_types,omitempty"`
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

// UnmarshalJSON decodes a job from scratch: a job a request lists does
// not take the omitted fields (steps, slo_hours, planned) of the default
// job at its index, which encoding/json would otherwise keep when decoding
// into the default cluster's job list. Unknown fields are errors.
func (j *Job) UnmarshalJSON(data []byte) error {
	type plain Job // without this method
	var p plain
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return err
	}
	*j = Job(p)
	return nil
}

// MaxWorkerTypes is the most GPU types a cluster may have.
const MaxWorkerTypes = 8

// Types returns the cluster's GPU types, in the order of GPUs.
func (c Cluster) Types() []string {
	if c.Workload == WorkloadJobTypes && len(c.WorkerTypes) > 0 {
		return c.WorkerTypes
	}
	return WorkerTypes(c.Workload)
}

// GavelTypes reports whether the cluster's GPU types are all Gavel's, on
// which its measured throughput table has every job type.
func (c Cluster) GavelTypes() bool {
	gavel := WorkerTypes(WorkloadJobTypes)
	for _, wt := range c.Types() {
		found := false
		for _, g := range gavel {
			found = found || g == wt
		}
		if !found {
			return false
		}
	}
	return true
}

// validScale checks a job's scale factor: 1, 2, 4 or 8 GPUs for Gavel's
// measured job types; any GPU count up to MaxClusterGPUs for a planned job,
// spanning servers of its Plan page's size (PlannedServers).
func (j Job) validScale(field string) error {
	if j.Planned == nil {
		if j.Scale != 1 && j.Scale != 2 && j.Scale != 4 && j.Scale != 8 {
			return fmt.Errorf("%s: must be 1, 2, 4 or 8 (Gavel measured these), got %d", field, j.Scale)
		}
		return nil
	}
	if err := intIn(field, j.Scale, 1, MaxClusterGPUs); err != nil {
		return err
	}
	if _, err := PlannedServers(j.Scale, j.Planned.GPUsPerNode); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

// PlannedRuns is how many planner runs the cluster's planned jobs take
// at most: each on each GPU type, consolidated, and a multi-GPU one again
// with its GPUs on separate servers (placement-sensitive allocation, and
// every simulated trace of the listed jobs).
func (c Cluster) PlannedRuns() int {
	n := 0
	for _, j := range c.Jobs {
		if j.Planned == nil {
			continue
		}
		n += len(c.Types())
		if j.Scale > 1 {
			n += len(c.Types())
		}
	}
	return n
}

// validatePlanned checks what a planned job's Plan inputs may not set:
// the job runs on its scale factor's servers of each GPU type, so an
// explicit topology would be ignored, and PipeDream's own cost model
// (tens of seconds a run on GNMT-16, MaxPipeDreamCostLevels) would be
// run once per GPU type and placement.
func (p Plan) validatePlanned() error {
	if len(p.Levels) > 0 {
		return fieldErr("levels", "a planned job runs on its scale factor's servers of each GPU type, got an explicit topology of %d levels", len(p.Levels))
	}
	if p.CostModel == CostModels[1] {
		return fieldErr("cost_model", "a planned job is planned with pipeplan's cost model, once per GPU type and placement; got %q", p.CostModel)
	}
	return nil
}

// PlannedServers is how many servers a planned job of scale GPUs spans
// with its GPUs consolidated: one when they fit in a server of perServer
// GPUs, else scale/perServer full servers (scale must then be a multiple).
func PlannedServers(scale, perServer int) (int, error) {
	if perServer < 1 {
		return 0, fmt.Errorf("servers of %d GPUs: need at least 1", perServer)
	}
	if scale <= perServer {
		return 1, nil
	}
	if scale%perServer != 0 {
		return 0, fmt.Errorf("%d GPUs do not fill servers of %d: use a multiple of %d", scale, perServer, perServer)
	}
	return scale / perServer, nil
}

// GPUsPerServer is the server size of each of the cluster's GPU types,
// in the order of GPUs (gpuprofiles' servers.json: Gavel's types on the
// cloud instances its chapters name, today's GPUs on their HGX/DGX or
// cloud servers); a multi-GPU job is consolidated on one server of its
// type (§5.3.1).
func (c Cluster) GPUsPerServer() ([]int, error) {
	sizes, err := gpuprofiles.GPUsPerServer(c.Types())
	if err != nil {
		return nil, fieldErr("cluster.worker_types", "%v", err)
	}
	return sizes, nil
}

// PaperCluster is the example of dissertation §5.4.1 (Figure 5.5): three
// single-GPU jobs on one V100 and one K80 under max-min fairness, its
// fixed throughputs in app. Its job list (used once the workload is
// switched to Gavel's job types) is four jobs of Table 5.2, one of them
// (LM) on 2 GPUs. Links made before DefaultCluster changed (until
// November 2026) carried these values, all of them: they decode to it.
func PaperCluster() Cluster {
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

// DefaultCluster is what the Cluster page opens on: Gavel's three GPU
// types, a V100 server, two P100 servers and a K80 server (8 + 8 + 16
// GPUs, GPUsPerServer), shared by twelve jobs of Gavel's job types (Table
// 5.2) of 1 to 8 GPUs and priority weights 1 to 4 under heterogeneity-aware
// max-min fairness (LAS, §5.4.1). The jobs ask for 37 GPUs at once, and a
// V100 is from 2.1× (A3C) to 8.9× (CycleGAN) a K80 while Recommendation
// runs fastest on a P100, so the allocation differs from the
// heterogeneity-agnostic one. Gavel measured these types on all three
// GPUs, so every job has a throughput on every type (it measured none on
// today's GPUs: a job added from the Plan page runs there). Its jobs set
// no steps or SLOs, so the makespan, finish-time fairness and SLO policies
// ask for them.
func DefaultCluster() Cluster {
	return Cluster{
		Workload: WorkloadJobTypes,
		GPUs:     []int{8, 8, 16},
		Jobs: []Job{
			{Type: "ResNet-50 (batch size 64)", Scale: 1, Weight: 1},
			{Type: "Transformer (batch size 128)", Scale: 1, Weight: 1},
			{Type: "A3C", Scale: 1, Weight: 1},
			{Type: "CycleGAN", Scale: 1, Weight: 2},
			{Type: "Recommendation (batch size 2048)", Scale: 1, Weight: 1},
			{Type: "LM (batch size 20)", Scale: 2, Weight: 1},
			{Type: "ResNet-18 (batch size 256)", Scale: 2, Weight: 1},
			{Type: "Transformer (batch size 64)", Scale: 4, Weight: 2},
			{Type: "ResNet-50 (batch size 32)", Scale: 4, Weight: 1},
			{Type: "ResNet-18 (batch size 64)", Scale: 4, Weight: 1},
			{Type: "LM (batch size 80)", Scale: 8, Weight: 4},
			{Type: "Transformer (batch size 32)", Scale: 8, Weight: 1},
		},
		Policy:           "max_min_fairness_perf",
		TraceJobs:        30,
		TraceJobsPerHour: 4,
	}
}

// Validate checks the Cluster page's inputs; errors name the field and value.
func (c Cluster) Validate() error {
	if c.Workload != WorkloadPaper && c.Workload != WorkloadJobTypes {
		return fieldErr("cluster.workload", "must be %q or %q, got %q", WorkloadPaper, WorkloadJobTypes, c.Workload)
	}
	if c.WorkerTypes != nil {
		if c.Workload != WorkloadJobTypes {
			return fieldErr("cluster.worker_types", "the %s workload has its own GPU types, got %v", c.Workload, c.WorkerTypes)
		}
		if len(c.WorkerTypes) == 0 || len(c.WorkerTypes) > MaxWorkerTypes {
			return fieldErr("cluster.worker_types", "must list 1 to %d GPU types, got %d", MaxWorkerTypes, len(c.WorkerTypes))
		}
		seen := map[string]bool{}
		for i, wt := range c.WorkerTypes {
			field := fmt.Sprintf("cluster.worker_types[%d]", i)
			if len(wt) > 64 {
				return fieldErr(field, "must name a GPU, got %d characters", len(wt))
			}
			if _, err := gpuprofiles.WorkerTypeGPU(wt); err != nil {
				return fieldErr(field, "%v", err)
			}
			if seen[wt] {
				return fieldErr(field, "%q is listed twice", wt)
			}
			seen[wt] = true
		}
	}
	if want := len(c.Types()); len(c.GPUs) != want {
		return fieldErr("cluster.gpus", "must have %d counts (%v), got %d", want, c.Types(), len(c.GPUs))
	}
	total := 0
	for i, n := range c.GPUs {
		if err := intIn(fmt.Sprintf("cluster.gpus[%d]", i), n, 0, MaxClusterGPUs); err != nil {
			return err
		}
		total += n
	}
	if total == 0 {
		return fieldErr("cluster.gpus", "need at least one GPU in all, got %v", c.GPUs)
	}
	if len(c.Jobs) > MaxJobs {
		return fieldErr("cluster.jobs", "at most %d jobs, got %d", MaxJobs, len(c.Jobs))
	}
	for i, j := range c.Jobs {
		if j.Type == "" || len(j.Type) > 100 || !utf8.ValidString(j.Type) {
			return fieldErr(fmt.Sprintf("cluster.jobs[%d].type", i), "must name a job type, got %q", j.Type)
		}
		if j.Planned != nil {
			if err := j.Planned.Validate(); err != nil {
				return nest(fmt.Sprintf("cluster.jobs[%d].planned", i), err)
			}
			if err := j.Planned.validatePlanned(); err != nil {
				return nest(fmt.Sprintf("cluster.jobs[%d].planned", i), err)
			}
		}
		if err := j.validScale(fmt.Sprintf("cluster.jobs[%d].scale", i)); err != nil {
			return err
		}
		if math.IsNaN(j.Weight) || j.Weight <= 0 || j.Weight > MaxJobWeight {
			return fieldErr(fmt.Sprintf("cluster.jobs[%d].weight", i), "must be in (0, %d], got %v", MaxJobWeight, j.Weight)
		}
		if math.IsNaN(j.Steps) || j.Steps < 0 || j.Steps > MaxJobSteps {
			return fieldErr(fmt.Sprintf("cluster.jobs[%d].steps", i), "must be in [0, %g], got %v", float64(MaxJobSteps), j.Steps)
		}
		if math.IsNaN(j.SLOHours) || j.SLOHours < 0 || j.SLOHours > MaxSLOHours {
			return fieldErr(fmt.Sprintf("cluster.jobs[%d].slo_hours", i), "must be in [0, %g], got %v", float64(MaxSLOHours), j.SLOHours)
		}
	}
	if n := c.PlannedRuns(); n > MaxPlannedRuns {
		return fieldErr("cluster.jobs", "the planned jobs need %s planner runs (each on each of the %d GPU types, a multi-GPU one again on separate servers), over the limit of %s: list fewer planned jobs or GPU types",
			group(n), len(c.Types()), group(MaxPlannedRuns))
	}
	if err := intIn("cluster.trace_jobs", c.TraceJobs, 1, MaxTraceJobs); err != nil {
		return err
	}
	if math.IsNaN(c.TraceJobsPerHour) || c.TraceJobsPerHour <= 0 || c.TraceJobsPerHour > MaxJobsPerHour {
		return fieldErr("cluster.trace_jobs_per_hour", "must be in (0, %d], got %v", MaxJobsPerHour, c.TraceJobsPerHour)
	}
	if c.TraceWorkload != TraceGavelJobTypes && c.TraceWorkload != TraceListedJobs {
		return fieldErr("cluster.trace_workload", "must be %q (Gavel's job types) or %q, got %q", TraceGavelJobTypes, TraceListedJobs, c.TraceWorkload)
	}
	if c.Policy == "" || len(c.Policy) > 64 || !utf8.ValidString(c.Policy) {
		return fieldErr("cluster.policy", "must name a policy, got %q", c.Policy)
	}
	if gavel.SpaceSharing(c.Policy) && c.TraceJobs > MaxPackedTraceJobs {
		return fieldErr("cluster.trace_jobs", "a space-sharing policy (%s) simulates at most %s jobs (it solves an LP over every pair of active jobs), got %s",
			c.Policy, group(MaxPackedTraceJobs), group(c.TraceJobs))
	}
	return nil
}

// SimulationWorkError is the error of a trace simulation of c stopped at
// MaxSimulationWork with done of its jobs completed and active running.
func (c Cluster) SimulationWorkError(done, active int) error {
	gpus := 0
	for _, n := range c.GPUs {
		gpus += n
	}
	rate := strconv.FormatFloat(c.TraceJobsPerHour, 'g', 6, 64)
	if c.TraceJobsPerHour == math.Trunc(c.TraceJobsPerHour) {
		rate = group(int(c.TraceJobsPerHour))
	}
	return fieldErr("cluster.trace_jobs", "the simulation of %s jobs arriving at %s an hour on %s GPUs stopped at its work limit (%s active jobs summed over rounds and allocations) with %s jobs done and %s waiting or running: "+
		"simulate fewer jobs, fewer an hour, or on more GPUs (`pipeplan gavel simulate` has no limit)",
		group(c.TraceJobs), rate, group(gpus), group(MaxSimulationWork), group(done), group(active))
}
