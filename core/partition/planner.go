package partition

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"pipeplan/core/cost"
	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// Progress receives the progress of a planner: done of total units of its
// work (pairs of degrees, DP rows or states, search steps), 0 <= done <=
// total and total >= 1. The calls come from the planner's goroutine or, one
// at a time, from its workers; done never decreases. Every planner reports
// done == total when it succeeds, so done/total is the fraction done.
// Cancellation goes the other way, through the planner's context.
type Progress func(done, total int)

// Planner is one of pipeplan's planning algorithms. Plan splits the
// problem's model over its system and returns the configurations it
// proposes ranked best first: the fitting ones by predicted throughput,
// then (PTD-P only) configurations that do not fit, marked so. A planner
// returns ctx.Err() soon after ctx is cancelled; progress may be nil.
type Planner interface {
	// Name is the planner's name as plans carry it (plan.Planner*).
	Name() string
	// Plan plans the problem.
	Plan(ctx context.Context, p Problem, progress Progress) ([]Candidate, error)
}

// Problem is what a planner is asked to plan: a model, the system it runs
// on and the execution choices fixed in advance.
type Problem struct {
	// Profile is the model as a chain of measured layers, which PipeDream,
	// 2BW and MadPipe partition.
	Profile *model.Profile
	// States, when set, are the antichain states of a branching PipeDream
	// graph whose linearized chain is Profile: PipeDream partitions the
	// states (dissertation §2.4.1) and its run plan has one layer per stage.
	States *model.States
	// Transformer is the model as a transformer spec, which PTD-P plans.
	Transformer *model.Transformer
	// System is the hardware (see SystemOf).
	System System
	// Fixed holds the execution choices made in advance. GlobalBatch is B
	// for 2BW and PTD-P; PTD-P searches the degrees, microbatch size and
	// recomputation left zero (see PTDPOptions.Fixed).
	Fixed plan.Execution
	// Straight forbids PipeDream's stage replication (--straight_pipeline).
	Straight bool
	// CostModel selects PipeDream's formulas; "" is CostPipeplan.
	CostModel CostModel
	// AllowCrossNodeTP lets PTD-P's tensor-parallel size span whole nodes.
	AllowCrossNodeTP bool
	// Cost holds the system-side constants of PTD-P's cost model.
	Cost cost.Options
}

// Candidate is one configuration a planner proposes: the execution, the
// stages, and what the planner predicts of them.
type Candidate struct {
	// Planner is the name of the planner that proposed it.
	Planner string `json:"planner"`
	// Execution is how the model runs: degrees, microbatching, schedule
	// and recomputation. PipeDream's per-stage replicas are in Stages (DP 1).
	Execution plan.Execution `json:"execution"`
	// Microbatches is the number of microbatches per pipeline that the
	// schedule runs: Execution.Microbatches(), except for PipeDream's
	// asynchronous pipeline (no flush), where it is the NOAM inputs in
	// flight (§2.3.2), and MadPipe's periodic schedule, where it is one.
	Microbatches int `json:"microbatches"`
	// Stages are the pipeline stages in order, as the run plan lists them.
	Stages []plan.Stage `json:"stages"`
	// Predictions are the predicted step time, throughput and memory (per
	// stage in StagePeakBytes).
	Predictions plan.Predictions `json:"predictions"`
	// Fits reports whether the most loaded GPU's memory fits its capacity;
	// only PTD-P proposes candidates that do not.
	Fits bool `json:"fits"`
	// Reason says why the candidate does not fit ("" when it does).
	Reason string `json:"reason,omitempty"`
	// NoExport says why the candidate has no run plan ("" when it has one).
	NoExport string `json:"no_export,omitempty"`

	// The planner's own account of the candidate; the one of its planner is set.

	// PipeDream is PipeDream's partition (stage replicas, NOAM, memory).
	PipeDream *PipeDreamResult `json:"pipedream,omitempty"`
	// TwoBW is what 2BW's planner chose beyond the execution.
	TwoBW *TwoBWDetail `json:"two_bw,omitempty"`
	// MadPipe is MadPipe's allocation and periodic schedule.
	MadPipe *MadPipeResult `json:"madpipe,omitempty"`
	// PTDP is the cost model's prediction of a PTD-P configuration.
	PTDP *cost.Prediction `json:"ptdp,omitempty"`

	model   plan.Model   // what the run plan names as the model
	cluster plan.Cluster // and as the cluster
}

// RunPlan is the candidate as the exported run plan, validated.
func (c Candidate) RunPlan() (*plan.Plan, error) {
	if c.NoExport != "" {
		return nil, fmt.Errorf("%s plan: %s", c.Planner, c.NoExport)
	}
	p := &plan.Plan{
		Version:     plan.Version,
		Planner:     c.Planner,
		Model:       c.model,
		Cluster:     c.cluster,
		Execution:   c.Execution,
		Stages:      slices.Clone(c.Stages),
		Predictions: c.Predictions,
	}
	p.Predictions.StagePeakBytes = slices.Clone(c.Predictions.StagePeakBytes)
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s plan: %w", c.Planner, err)
	}
	return p, nil
}

// planners is the registry: every planner, by name.
var planners = map[string]Planner{
	plan.PlannerPipeDream: pipeDreamPlanner{},
	plan.PlannerTwoBW:     twoBWPlanner{},
	plan.PlannerMadPipe:   madPipePlanner{},
	plan.PlannerPTDP:      ptdpPlanner{},
}

// Planners returns every registered planner, ordered by name.
func Planners() []Planner {
	names := make([]string, 0, len(planners))
	for n := range planners {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Planner, len(names))
	for i, n := range names {
		out[i] = planners[n]
	}
	return out
}

// Lookup returns the planner registered under name.
func Lookup(name string) (Planner, error) {
	if p, ok := planners[name]; ok {
		return p, nil
	}
	names := make([]string, 0, len(planners))
	for _, p := range Planners() {
		names = append(names, p.Name())
	}
	return nil, fmt.Errorf("planner: must be one of %v, got %q", names, name)
}

// profilePlanModel is the run plan's model of a layer profile.
func profilePlanModel(prof model.Profile) plan.Model {
	return plan.Model{Name: prof.Name, NumLayers: len(prof.Layers), Profile: &prof}
}

// needProfile returns the problem's layer chain or says which planner needs one.
func (p Problem) needProfile(planner string) (model.Profile, error) {
	if p.Profile == nil {
		return model.Profile{}, fmt.Errorf("%s: partitions a measured layer profile; the problem has none", planner)
	}
	return *p.Profile, nil
}
