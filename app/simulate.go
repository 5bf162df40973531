package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"pipeplan/app/request"
	"pipeplan/core/gavel"
	"pipeplan/gpuprofiles"
)

// SimulateTrace draws a synthetic trace of the Cluster page's size and
// arrival rate (Gavel's generator, §5.7.1) and simulates it round by round
// (§5.7) on the page's job-types cluster under its policy, placement-
// sensitive (§5.3.1) when the page says so, with space sharing (§5.3.1)
// under the "_packed" policies. The trace's jobs are of Gavel's job types,
// or of the jobs listed on the page (listedTrace). progress, if not nil,
// gets the jobs completed and the trace size; yield, if not nil, is called
// before every allocation so a caller sharing one thread with a UI
// (WebAssembly in a page) can let it run. A simulation past
// request.MaxSimulationWork stops with an error naming the trace's size.
func SimulateTrace(ctx context.Context, in request.Cluster, progress func(done, total int), yield func()) (*gavel.SimResult, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if in.Workload != request.WorkloadJobTypes {
		return nil, fmt.Errorf("cluster.workload: simulation runs on the job-types cluster (V100/P100/K80), got %q", in.Workload)
	}
	policy, err := gavel.PolicyByName(in.Policy)
	if err != nil {
		return nil, fmt.Errorf("cluster.policy: %w", err)
	}
	if !in.GavelTypes() {
		return nil, fmt.Errorf("cluster.worker_types: the simulator draws Gavel's measured job types, so it runs on Gavel's GPU types %v only, got %v", request.WorkerTypes(request.WorkloadJobTypes), in.Types())
	}
	perServer, err := in.GPUsPerServer()
	if err != nil {
		return nil, err
	}
	spec := gavel.ClusterSpec{WorkerTypes: in.Types(), NumWorkers: in.GPUs, GPUsPerServer: perServer}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("cluster.gpus: %w", err)
	}
	var jobs []gavel.Job
	var table *gavel.ThroughputTable // nil: Gavel's
	if in.TraceWorkload == request.TraceListedJobs {
		jobs, table, err = listedTrace(ctx, in)
	} else {
		jobs, err = gavel.GenerateTrace(gavel.TraceConfig{NumJobs: in.TraceJobs, JobsPerHour: in.TraceJobsPerHour, MultiGPU: true})
	}
	if err != nil {
		return nil, err
	}
	res, err := simulate(ctx, gavel.SimConfig{Cluster: spec, Policy: policy, Jobs: jobs, Throughputs: table, Progress: progress,
		PlacementSensitive: in.PlacementSensitive, MaxWork: request.MaxSimulationWork}, in.Policy, gpuprofiles.DefaultPriceList(), yield)
	var limit *gavel.WorkLimitError
	if errors.As(err, &limit) {
		return nil, in.SimulationWorkError(limit.Completed, limit.Active)
	}
	return res, err
}

// simulate runs Gavel's simulator on cfg under the policy named policyName
// (cfg.Policy): with space sharing also under the "_packed" policies, the
// price list's prices of cfg's worker types for the cost metric, and
// yield, if not nil, called before every allocation. Both the Cluster
// page's simulation and `pipeplan gavel simulate` end here.
func simulate(ctx context.Context, cfg gavel.SimConfig, policyName string, prices gpuprofiles.PriceList, yield func()) (*gavel.SimResult, error) {
	var err error
	if cfg.PricePerHour, err = prices.ForWorkerTypes(cfg.Cluster.WorkerTypes); err != nil {
		return nil, fmt.Errorf("price list %s: %w", prices.ID, err)
	}
	cfg.SpaceSharing = cfg.SpaceSharing || gavel.SpaceSharing(policyName)
	if yield != nil {
		cfg.Policy = yieldingPolicy{Policy: cfg.Policy, yield: yield}
	}
	return gavel.Simulate(ctx, cfg)
}

// listedTrace draws a trace whose jobs are the page's listed jobs, each one
// uniformly at random with its type, scale factor and priority weight,
// arriving and lasting as §5.7.1 says (gavel.TraceConfig.Templates). It
// returns the table to simulate it with: Gavel's, plus each planned job as
// an extra job type (gavel.ThroughputTable.WithJobTypes) at the planner's
// throughputs the allocation uses (instance, unconsolidated); planned jobs
// never share GPUs.
func listedTrace(ctx context.Context, in request.Cluster) ([]gavel.Job, *gavel.ThroughputTable, error) {
	inst, _, _, err := instance(ctx, in)
	if err != nil {
		return nil, nil, err
	}
	spread, _, err := unconsolidated(ctx, in, inst)
	if err != nil {
		return nil, nil, err
	}
	var planned []gavel.ExtraJobType
	templates := make([]gavel.Job, len(inst.Jobs))
	for m, job := range inst.Jobs {
		templates[m] = gavel.Job{JobType: job.JobType, ScaleFactor: job.ScaleFactor, PriorityWeight: in.Jobs[m].Weight}
		if in.Jobs[m].Planned != nil {
			// Unique per listed job: two planned jobs may share a label.
			templates[m].JobType = fmt.Sprintf("%s (job %d)", job.JobType, m)
			e := gavel.ExtraJobType{Model: templates[m].JobType, ScaleFactor: job.ScaleFactor, Isolated: byWorkerType(inst.WorkerTypes, inst.Throughputs[m])}
			if job.ScaleFactor > 1 {
				e.Unconsolidated = byWorkerType(inst.WorkerTypes, spread[m])
			}
			planned = append(planned, e)
		}
	}
	table, err := gavel.DefaultThroughputs().WithJobTypes(planned)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster.jobs: %w", err)
	}
	jobs, err := gavel.GenerateTrace(gavel.TraceConfig{NumJobs: in.TraceJobs, JobsPerHour: in.TraceJobsPerHour,
		Templates: templates, Throughputs: table, ReferenceWorkerType: gavel.DefaultReferenceWorkerType})
	if err != nil {
		return nil, nil, err
	}
	return jobs, table, nil
}

// byWorkerType maps a row of per-type values to the worker types.
func byWorkerType(types []string, row []float64) map[string]float64 {
	out := make(map[string]float64, len(types))
	for k, wt := range types {
		out[wt] = row[k]
	}
	return out
}

// yieldingPolicy calls yield before each allocation of the policy it wraps.
type yieldingPolicy struct {
	gavel.Policy
	yield func()
}

// Allocate yields, then allocates with the wrapped policy.
func (p yieldingPolicy) Allocate(ctx context.Context, inst *gavel.Instance) (*gavel.Allocation, error) {
	p.yield()
	return p.Policy.Allocate(ctx, inst)
}

// Defaults of a GavelTrace: Gavel's round length and server size.
const (
	DefaultRoundSeconds  = gavel.DefaultRoundSeconds
	DefaultGPUsPerServer = gavel.DefaultGPUsPerServer
)

// GavelTrace is a trace simulation as `pipeplan gavel simulate` asks for
// it: a cluster of Gavel's worker types, a policy, and a Gavel trace file
// or a trace drawn by Gavel's generator (§5.7.1). Bad values are a
// *request.FieldError naming the field by its JSON name below.
type GavelTrace struct {
	// Cluster is the GPU counts of GavelTraceWorkerTypes, e.g. "36:36:36".
	Cluster string `json:"cluster"`
	// PriceList is the id of the price list of the cost metric and the
	// cost policies (gpuprofiles/cloud.json; "": the default list).
	PriceList string `json:"price_list"`
	// GPUsPerServer is every worker type's server size.
	GPUsPerServer int `json:"gpus_per_server"`
	// Policy is a Gavel policy name.
	Policy string `json:"policy"`
	// TraceName and Trace are a trace file's name and contents; when
	// Trace is empty a trace is generated from the fields below.
	TraceName string `json:"trace_name"`
	Trace     []byte `json:"trace"`
	// NumJobs, JobsPerHour (0: all at t = 0), Seed, MultiGPU (scale
	// factors 1/2/4/8), PriorityWeights and SLOs are the generator's
	// (gavel.TraceConfig).
	NumJobs         int     `json:"num_jobs"`
	JobsPerHour     float64 `json:"jobs_per_hour"`
	Seed            uint64  `json:"seed"`
	MultiGPU        bool    `json:"multi_gpu"`
	PriorityWeights bool    `json:"priority_weights"`
	SLOs            bool    `json:"slos"`
	// Models names the job types to draw from (nil: all of Gavel's).
	Models []string `json:"models"`
	// DurationChoicesSeconds are the job durations to draw from (nil:
	// §5.7.1's distribution).
	DurationChoicesSeconds []float64 `json:"duration_choices_seconds"`
	// WindowFrom and WindowTo are the job IDs whose metrics are reported
	// (both 0: every job).
	WindowFrom int `json:"window_from"`
	WindowTo   int `json:"window_to"`
	// RoundSeconds is the round length.
	RoundSeconds float64 `json:"round_seconds"`
	// SpaceSharing offers co-located pairs (implied by "_packed" policies);
	// PlacementSensitive gives the policies unconsolidated throughputs.
	SpaceSharing       bool `json:"space_sharing"`
	PlacementSensitive bool `json:"placement_sensitive"`
	// PerJob keeps every window job's outcome in the result.
	PerJob bool `json:"per_job"`
	// Progress, if not nil, gets the window jobs completed and their number.
	Progress func(done, total int) `json:"-"`
}

// GavelTraceResult is a GavelTrace's settings and metrics: the JSON of
// `pipeplan gavel simulate --json`.
type GavelTraceResult struct {
	Cluster     string  `json:"cluster"`
	Trace       string  `json:"trace,omitempty"`
	NumJobs     int     `json:"num_jobs"`
	JobsPerHour float64 `json:"jobs_per_hour,omitempty"`
	Seed        uint64  `json:"seed"`
	MultiGPU    bool    `json:"multi_gpu,omitempty"`
	*gavel.SimResult
}

// GavelTraceWorkerTypes is the order of GavelTrace.Cluster's counts:
// Gavel's worker types slowest first, K80:P100:V100 (gpuprofiles lists
// them fastest first).
func GavelTraceWorkerTypes() []string {
	types := gpuprofiles.GavelWorkerTypeNames()
	slices.Reverse(types)
	return types
}

// DefaultPriceListID is the id of the price list used when none is named.
func DefaultPriceListID() string { return gpuprofiles.DefaultPriceList().ID }

// PolicyNames lists Gavel's policies by name.
func PolicyNames() []string { return gavel.PolicyNames() }

// SimulateGavelTrace runs the simulation in on Gavel's simulator (§5.7).
func SimulateGavelTrace(ctx context.Context, in GavelTrace) (*GavelTraceResult, error) {
	field := func(name string, err error) error { return &request.FieldError{Field: name, Msg: err.Error()} }
	policy, err := gavel.PolicyByName(in.Policy)
	if err != nil {
		return nil, field("policy", err)
	}
	types := GavelTraceWorkerTypes()
	spec, err := gavel.ParseClusterSpec(in.Cluster, types)
	if err != nil {
		return nil, field("cluster", err)
	}
	spec.GPUsPerServer = []int{in.GPUsPerServer, in.GPUsPerServer, in.GPUsPerServer}
	list := gpuprofiles.DefaultPriceList()
	if in.PriceList != "" {
		if list, err = gpuprofiles.PriceListByID(in.PriceList); err != nil {
			return nil, field("price_list", err)
		}
	}
	out := &GavelTraceResult{Cluster: in.Cluster, Trace: in.TraceName, Seed: in.Seed}
	var jobs []gavel.Job
	if len(in.Trace) > 0 {
		if jobs, err = gavel.ParseTrace(in.Trace); err != nil {
			return nil, field("trace", err)
		}
	} else {
		out.JobsPerHour, out.MultiGPU = in.JobsPerHour, in.MultiGPU
		cfg := gavel.TraceConfig{NumJobs: in.NumJobs, JobsPerHour: in.JobsPerHour, Seed: in.Seed, MultiGPU: in.MultiGPU,
			PriorityWeights: in.PriorityWeights, SLOs: in.SLOs, DurationChoicesSeconds: in.DurationChoicesSeconds}
		if cfg.JobTypes, err = jobTypesNamed(in.Models); err != nil {
			return nil, err
		}
		if jobs, err = gavel.GenerateTrace(cfg); err != nil {
			return nil, err
		}
	}
	out.NumJobs = len(jobs)
	res, err := simulate(ctx, gavel.SimConfig{Cluster: spec, Policy: policy, Jobs: jobs, RoundSeconds: in.RoundSeconds,
		SpaceSharing: in.SpaceSharing, PlacementSensitive: in.PlacementSensitive, WindowFrom: in.WindowFrom, WindowTo: in.WindowTo,
		Progress: in.Progress}, in.Policy, list, nil)
	if err != nil {
		return nil, err
	}
	if !in.PerJob {
		res.Jobs = nil
	}
	out.SimResult = res
	return out, nil
}

// jobTypesNamed returns Gavel's job types named (nil for none: all types).
func jobTypesNamed(names []string) ([]gavel.JobType, error) {
	table := gavel.DefaultJobTable()
	var out []gavel.JobType
	for _, name := range names {
		i := slices.IndexFunc(table, func(jt gavel.JobType) bool { return jt.Model == strings.TrimSpace(name) })
		if i < 0 {
			return nil, &request.FieldError{Field: "models", Msg: fmt.Sprintf("unknown job type %q", name)}
		}
		out = append(out, table[i])
	}
	return out, nil
}
