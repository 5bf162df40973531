package app

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"pipeplan/app/request"
	"pipeplan/core/gavel"
	"pipeplan/gpuprofiles"
)

// paperThroughputs are the steps/s of the three jobs of dissertation §5.4.1
// on a V100 and a K80 (the example of Figure 5.5).
var paperThroughputs = [][]float64{{40, 10}, {12, 4}, {100, 50}}

// JobTypes lists the model strings of Gavel's 26 job types (Table 5.2).
func JobTypes() []string {
	var out []string
	for _, jt := range gavel.DefaultJobTable() {
		out = append(out, jt.Model)
	}
	return out
}

// GPUIDs lists the gpus.json ids, each usable as a worker type.
func GPUIDs() []string {
	var ids []string
	for _, g := range gpuprofiles.All() {
		ids = append(ids, g.ID)
	}
	return ids
}

// Server is a worker type's reference server: its GPUs per server, name
// and source (gpuprofiles' servers.json).
type Server = gpuprofiles.Server

// ServerOf returns the reference server of a worker type (Gavel's name or
// a gpus.json id): how many of its GPUs one server holds.
func ServerOf(workerType string) (Server, error) { return gpuprofiles.ServerOf(workerType) }

// PolicyInfo is a Gavel policy's traits: names, objective, section,
// heterogeneity-awareness, space sharing and baseline.
type PolicyInfo = gavel.PolicyInfo

// Policies lists Gavel's policies with their traits, sorted by name.
func Policies() []PolicyInfo { return gavel.Policies() }

// ClusterResult is a policy's allocation and what it gives each job.
type ClusterResult struct {
	// WorkerTypes and Jobs label the allocation's columns and rows.
	WorkerTypes []string `json:"worker_types"`
	Jobs        []string `json:"jobs"`
	// Throughputs[m][j] is job m's steps/s on worker type j.
	Throughputs [][]float64 `json:"throughputs"`
	// Sources[m][j] says where Throughputs[m][j] came from (Gavel's
	// measured table, or the planner's prediction and why it is 0).
	Sources [][]string `json:"throughput_sources"`
	// X[m][j] is the time fraction of job m on worker type j (with its
	// GPUs on one server, when placement-sensitive).
	X [][]float64 `json:"allocation"`
	// UnconsolidatedThroughputs[m][j], set when placement-sensitive, is job
	// m's steps/s on worker type j with its GPUs on separate servers
	// (§5.3.1); 0 for single-GPU jobs. UnconsolidatedSources says where
	// each came from (nil rows for single-GPU jobs: always consolidated).
	UnconsolidatedThroughputs [][]float64 `json:"unconsolidated_throughputs,omitempty"`
	UnconsolidatedSources     [][]string  `json:"unconsolidated_sources,omitempty"`
	// UnconsolidatedX[m][j], set when the policy is placement-sensitive, is
	// the time fraction of job m on worker type j with its GPUs on separate
	// servers; its time on type j is X[m][j] + UnconsolidatedX[m][j].
	UnconsolidatedX [][]float64 `json:"unconsolidated_allocation,omitempty"`
	// Pairs, set for the space-sharing ("_packed") policies, are the job
	// pairs offered to share GPUs (§5.3.1), with Gavel's measured co-located
	// throughputs; A and B index Jobs. PairX[p][j] is the time fraction of
	// Pairs[p] on worker type j.
	Pairs []gavel.Pair `json:"pairs,omitempty"`
	PairX [][]float64  `json:"pair_allocation,omitempty"`
	// Sharing[m], set for the space-sharing policies, says with which jobs
	// job m can share GPUs, or why it cannot.
	Sharing []string `json:"sharing,omitempty"`
	// Effective[m] is job m's effective throughput Σ_j X[m][j]·T[m][j]
	// (eq. 5.1), plus Σ_j UnconsolidatedX[m][j]·UnconsolidatedThroughputs[m][j]
	// and its pairs' time at their co-located throughputs.
	Effective []float64 `json:"effective_throughput"`
	// Baseline[m] is the same under the heterogeneity-agnostic BaselinePolicy
	// (gavel.PolicyInfo.Baseline: the policy's agnostic counterpart).
	Baseline       []float64 `json:"baseline_throughput"`
	Policy         string    `json:"policy"`
	BaselinePolicy string    `json:"baseline_policy"`
}

// Allocate builds the Cluster page's instance and solves the chosen Gavel
// policy on it, and its heterogeneity-agnostic counterpart as a baseline.
func Allocate(ctx context.Context, in request.Cluster) (ClusterResult, error) {
	if err := in.Validate(); err != nil {
		return ClusterResult{}, err
	}
	inst, labels, sources, err := instance(ctx, in)
	if err != nil {
		return ClusterResult{}, err
	}
	var spreadSources [][]string
	if in.PlacementSensitive {
		if inst.UnconsolidatedThroughputs, spreadSources, err = unconsolidated(ctx, in, inst); err != nil {
			return ClusterResult{}, err
		}
	}
	var sharing []string
	if gavel.SpaceSharing(in.Policy) {
		if sharing, err = offerPairs(in, inst); err != nil {
			return ClusterResult{}, err
		}
	}
	if info, ok := gavel.LookupPolicy(in.Policy); ok && info.NeedsPrices {
		if err := withPrices(in.Policy, inst); err != nil {
			return ClusterResult{}, err
		}
	}
	policy, err := gavel.PolicyByName(in.Policy)
	if err != nil {
		return ClusterResult{}, fmt.Errorf("cluster.policy: %w", err)
	}
	al, err := policy.Allocate(ctx, inst)
	if err != nil {
		return ClusterResult{}, err
	}
	info, _ := gavel.LookupPolicy(in.Policy)
	baseName := info.Baseline
	base, err := gavel.PolicyByName(baseName)
	if err != nil {
		return ClusterResult{}, err
	}
	bl, err := base.Allocate(ctx, inst)
	if err != nil {
		return ClusterResult{}, fmt.Errorf("baseline %s: %w", baseName, err)
	}
	return ClusterResult{
		WorkerTypes: inst.WorkerTypes, Jobs: labels, Throughputs: inst.Throughputs, Sources: sources, X: al.X,
		UnconsolidatedThroughputs: inst.UnconsolidatedThroughputs, UnconsolidatedSources: spreadSources, UnconsolidatedX: al.UnconsolidatedX,
		Pairs: inst.Pairs, PairX: al.PairX, Sharing: sharing,
		Effective: gavel.EffectiveThroughputs(inst, al), Baseline: gavel.EffectiveThroughputs(inst, bl),
		Policy: in.Policy, BaselinePolicy: baseName,
	}, nil
}

// instance builds a gavel.Instance from the Cluster page's inputs, with
// where each throughput came from.
func instance(ctx context.Context, in request.Cluster) (*gavel.Instance, []string, [][]string, error) {
	types := in.Types()
	perServer, err := in.GPUsPerServer()
	if err != nil {
		return nil, nil, nil, err
	}
	inst := &gavel.Instance{Name: in.Workload, WorkerTypes: types, NumWorkers: in.GPUs, GPUsPerServer: perServer}
	var sources [][]string
	if in.Workload == request.WorkloadPaper {
		for m, row := range paperThroughputs {
			inst.Jobs = append(inst.Jobs, gavel.Job{ID: m, ScaleFactor: 1, PriorityWeight: 1})
			inst.Throughputs = append(inst.Throughputs, append([]float64(nil), row...))
			sources = append(sources, []string{"§5.4.1 example (Figure 5.5)", "§5.4.1 example (Figure 5.5)"})
		}
		return inst, []string{"job 0", "job 1", "job 2"}, sources, nil
	}
	if len(in.Jobs) == 0 {
		return nil, nil, nil, fmt.Errorf("cluster.jobs: add at least one job")
	}
	table := gavel.DefaultThroughputs()
	var labels []string
	for m, j := range in.Jobs {
		var row []float64
		var src []string
		if j.Planned != nil {
			if row, src, err = plannedThroughputs(ctx, *j.Planned, j.Scale, types); err != nil {
				return nil, nil, nil, fmt.Errorf("cluster.jobs[%d] (%s): %w", m, j.Type, err)
			}
		} else {
			row, src = make([]float64, len(types)), make([]string, len(types))
			measured := table.WorkerTypes()
			for k, wt := range types {
				if !slices.Contains(measured, wt) {
					src[k] = fmt.Sprintf("Gavel measured %s only on %s: add the job from the Plan page for a prediction on %s", j.Type, strings.Join(measured, ", "), wt)
					continue
				}
				v, err := table.Isolated(wt, gavel.JobKey{Model: j.Type, ScaleFactor: j.Scale})
				if err != nil {
					return nil, nil, nil, fmt.Errorf("cluster.jobs[%d]: %w", m, err)
				}
				row[k], src[k] = v, fmt.Sprintf("Gavel's measured throughput of %s ×%d on %s (Table 5.2 job table)", j.Type, j.Scale, wt)
			}
			if !slices.ContainsFunc(row, func(v float64) bool { return v > 0 }) {
				return nil, nil, nil, fmt.Errorf("cluster.jobs[%d] (%s): Gavel measured it only on %s, none of this cluster's GPU types %v; add it from the Plan page instead", m, j.Type, strings.Join(measured, ", "), types)
			}
		}
		inst.Jobs = append(inst.Jobs, gavel.Job{ID: m, JobType: j.Type, ScaleFactor: j.Scale, PriorityWeight: j.Weight,
			NumSteps: j.Steps, SLOSeconds: j.SLOHours * 3600})
		inst.Throughputs = append(inst.Throughputs, row)
		sources = append(sources, src)
		labels = append(labels, fmt.Sprintf("%d: %s ×%d", m, j.Type, j.Scale))
	}
	return inst, labels, sources, nil
}

// unconsolidated returns each job's steps/s on each worker type with its
// GPUs on separate servers (§5.3.1), with where each came from: Gavel's
// "_unconsolidated" measurements for its job types (the consolidated value
// where it measured none), the planner's prediction with one GPU per
// server for planned jobs. Single-GPU jobs get 0 and no sources: they are
// always consolidated.
func unconsolidated(ctx context.Context, in request.Cluster, inst *gavel.Instance) ([][]float64, [][]string, error) {
	table := gavel.DefaultThroughputs()
	types := inst.WorkerTypes
	rows, sources := make([][]float64, len(inst.Jobs)), make([][]string, len(inst.Jobs))
	for m, job := range inst.Jobs {
		rows[m] = make([]float64, len(types))
		// The paper example's jobs are all single-GPU; multi-GPU jobs
		// are the job-types list's, in.Jobs[m].
		if job.ScaleFactor == 1 {
			continue
		}
		sources[m] = make([]string, len(types))
		if p := in.Jobs[m].Planned; p != nil {
			row, src, err := plannedUnconsolidated(ctx, *p, job.ScaleFactor, types)
			if err != nil {
				return nil, nil, fmt.Errorf("cluster.jobs[%d] (%s): %w", m, job.JobType, err)
			}
			rows[m], sources[m] = row, src
			continue
		}
		key := gavel.JobKey{Model: job.JobType, ScaleFactor: job.ScaleFactor}
		for k, wt := range types {
			if !slices.Contains(table.WorkerTypes(), wt) {
				sources[m][k] = "Gavel measured nothing on " + wt
				continue
			}
			v, err := table.Placed(wt, key, false)
			if err != nil {
				return nil, nil, fmt.Errorf("cluster.jobs[%d]: %w", m, err)
			}
			rows[m][k] = v
			if _, err := table.Isolated(wt+gavel.UnconsolidatedSuffix, key); err == nil {
				sources[m][k] = fmt.Sprintf("Gavel's measured throughput of %s ×%d on %s with its GPUs on separate servers (%s%s)", job.JobType, job.ScaleFactor, wt, wt, gavel.UnconsolidatedSuffix)
			} else {
				sources[m][k] = fmt.Sprintf("Gavel measured no %s%s throughput of %s ×%d: its consolidated value", wt, gavel.UnconsolidatedSuffix, job.JobType, job.ScaleFactor)
			}
		}
	}
	return rows, sources, nil
}

// offerPairs gives a space-sharing policy the job pairs that can share GPUs
// (§5.3.1): those of Gavel's measured job types with a co-located
// throughput in its table (gavel.PairsFromTable, run on those jobs alone
// and mapped back to inst's indices). Planned jobs and the paper example's
// have no co-location data and never share. It returns, per job, with
// which jobs it can share or why it cannot.
func offerPairs(in request.Cluster, inst *gavel.Instance) ([]string, error) {
	why := make([]string, len(inst.Jobs))
	if in.Workload == request.WorkloadPaper {
		for m := range why {
			why[m] = "no Gavel job type (§5.4.1 example), so no measured co-located throughput: never shares"
		}
		return why, nil
	}
	// Pairs share GPUs of the types Gavel measured co-located (cols).
	table := gavel.DefaultThroughputs()
	measured := &gavel.Instance{}
	var cols []int
	for k, wt := range inst.WorkerTypes {
		if slices.Contains(table.WorkerTypes(), wt) {
			cols = append(cols, k)
			measured.WorkerTypes = append(measured.WorkerTypes, wt)
			measured.NumWorkers = append(measured.NumWorkers, inst.NumWorkers[k])
		}
	}
	var index []int // index[i] is inst's index of measured.Jobs[i]
	for m, j := range in.Jobs {
		if j.Planned != nil {
			why[m] = "planned by pipeplan, not a Gavel job type: no measured co-located throughput, so it never shares"
			continue
		}
		index = append(index, m)
		measured.Jobs = append(measured.Jobs, inst.Jobs[m])
		row := make([]float64, len(cols))
		for c, k := range cols {
			row[c] = inst.Throughputs[m][k]
		}
		measured.Throughputs = append(measured.Throughputs, row)
	}
	if len(cols) > 0 {
		if err := gavel.PairsFromTable(measured, table); err != nil {
			return nil, fmt.Errorf("cluster.jobs: space sharing among jobs %v: %w", index, err)
		}
	}
	partners := make([][]string, len(inst.Jobs))
	for _, p := range measured.Pairs {
		a, b := index[p.A], index[p.B]
		tput := make([][2]float64, len(inst.WorkerTypes))
		for c, k := range cols {
			tput[k] = p.Throughputs[c]
		}
		inst.Pairs = append(inst.Pairs, gavel.Pair{A: a, B: b, Throughputs: tput})
		partners[a] = append(partners[a], strconv.Itoa(b))
		partners[b] = append(partners[b], strconv.Itoa(a))
	}
	for _, m := range index {
		sf := inst.Jobs[m].ScaleFactor
		switch {
		case partners[m] != nil:
			jobs := "job "
			if len(partners[m]) > 1 {
				jobs = "jobs "
			}
			why[m] = "can share GPUs with " + jobs + strings.Join(partners[m], ", ") + " at Gavel's measured co-located throughputs"
		case slices.ContainsFunc(index, func(o int) bool { return o != m && inst.Jobs[o].ScaleFactor == sf }):
			why[m] = fmt.Sprintf("Gavel measured no co-located throughput for it with the other ×%d jobs", sf)
		default:
			why[m] = fmt.Sprintf("no other Gavel job of scale factor ×%d to share GPUs with (pairs need equal scale factors)", sf)
		}
	}
	return why, nil
}

// withPrices gives inst the default price list's GPU-hour prices
// (gpuprofiles/cloud.json, with its sources and date), which the cost
// policies need; a budget policy needs a budget the Cluster page does not
// ask for, and says where to give one.
func withPrices(policy string, inst *gavel.Instance) error {
	if policy == "min_makespan_budget_perf" {
		return &request.FieldError{Field: "cluster.policy", Msg: fmt.Sprintf("%s needs a budget in dollars, which the Cluster page does not ask for: "+
			"run it with `pipeplan gavel allocate --policy %s --budget DOLLARS` (or /api/v1/gavel/allocate with budget_dollars), or pick min_cost_slo_perf or min_makespan_perf here", policy, policy)}
	}
	list := gpuprofiles.DefaultPriceList()
	prices, err := list.ForWorkerTypes(inst.WorkerTypes)
	if err != nil {
		return &request.FieldError{Field: "cluster.policy", Msg: fmt.Sprintf("%s prices GPU-hours from the price list %s: %v", policy, list.ID, err)}
	}
	inst.PricePerHour = prices
	return nil
}
