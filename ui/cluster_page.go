package ui

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vugu/vugu"

	"pipeplan/app"
	"pipeplan/app/request"
)

// ClusterPage is the Cluster page: GPU counts, jobs and a Gavel policy on
// the left; the allocation heatmap and effective throughputs on the right.
type ClusterPage struct {
	// App is the shared application model.
	App *App
}

// ClusterView is the Cluster page's latest result.
type ClusterView struct {
	// Result is the allocation; zero when Err is set.
	Result app.ClusterResult
	// Err says why there is no allocation.
	Err string
	// Millis is how long the allocation took in the page, in ms.
	Millis float64
}

// TimingText reports how long the last allocation took.
func (v ClusterView) TimingText() string {
	if v.Millis == 0 && v.Err == "" && v.Result.Policy == "" {
		return "allocating…"
	}
	return fmt.Sprintf("allocated in %.1f ms", v.Millis)
}

func (c *ClusterPage) policies() []app.PolicyInfo { return app.Policies() }

// policyTitle is a Gavel policy's human-readable name (its raw name goes
// in a tooltip beside it), or the raw name when no policy has it.
func policyTitle(name string) string {
	for _, p := range app.Policies() {
		if p.Name == name {
			return p.Title
		}
	}
	return name
}
func (c *ClusterPage) jobTypes() []string { return app.JobTypes() }

// maxScale is the largest scale factor of job j: Gavel measured its job
// types on up to 8 GPUs; a planned job spans servers.
func (c *ClusterPage) maxScale(j request.Job) int {
	if j.Planned != nil {
		return request.MaxClusterGPUs
	}
	return 8
}
func (c *ClusterPage) workerTypes() []string {
	return c.App.State.Cluster.Types()
}

// id names the element of row i, e.g. "job-type-3".
func (c *ClusterPage) id(prefix string, i int) string { return prefix + "-" + strconv.Itoa(i) }

func (c *ClusterPage) heatmapSVG() vugu.HTML {
	return vugu.HTML(clusterHeatmapSVG(c.App.Cluster.Result))
}

func (c *ClusterPage) sharedHeatmapSVG() vugu.HTML {
	return vugu.HTML(sharedHeatmapSVG(c.App.Cluster.Result))
}

// sharingNote says how the allocation shares GPUs (§5.3.1), or "" when the
// policy does not share them.
func (c *ClusterPage) sharingNote() string {
	r := c.App.Cluster.Result
	switch {
	case r.Sharing == nil:
		return ""
	case len(r.Pairs) == 0:
		return "No two jobs here can share GPUs, so " + policyTitle(r.Policy) + " allocates as its version without space sharing does."
	}
	shared := len(pairsWithTime(r))
	if shared == 0 {
		return "No pair got time: " + policyTitle(r.Policy) + " does better with every job running alone."
	}
	below := "each pair that got time"
	if shared > maxPairRows {
		below = fmt.Sprintf("the %d of the %d pairs that got time with the most of it", maxPairRows, shared)
	}
	return "Space sharing (§5.3.1): two jobs run on the same GPUs at once, each at the co-located throughput Gavel measured. Green \"shared\" columns above: each job's time in pairs; \"total\": all its time, at most 1. Below, " + below + "; hover a cell for both jobs' throughputs."
}

// sharingRows says, per job, with which jobs it can share GPUs or why not.
func (c *ClusterPage) sharingRows() []string {
	r := c.App.Cluster.Result
	out := make([]string, len(r.Sharing))
	for m, why := range r.Sharing {
		out[m] = r.Jobs[m] + ": " + why
	}
	return out
}

// placementNote says how the allocation treats placement (§5.3.1), or ""
// when the page ignores it.
func (c *ClusterPage) placementNote() string {
	r := c.App.Cluster.Result
	switch {
	case r.UnconsolidatedThroughputs == nil:
		return ""
	case r.UnconsolidatedX == nil:
		return policyTitle(r.Policy) + " is heterogeneity-agnostic: it tells neither GPU types nor placements apart, so its time is shown undivided and credited consolidated throughput."
	}
	return "Blue columns: the job's GPUs on one server; orange \"spread\" columns: on separate servers, at the unconsolidated throughput (§5.3.1). Both share each type's GPUs; the agnostic baseline below is credited consolidated throughput."
}

// throughputColumns labels the columns of T: the worker types, then, when
// placement-sensitive, the same types spread over servers.
func (c *ClusterPage) throughputColumns() []string {
	r := c.App.Cluster.Result
	cols := append([]string(nil), r.WorkerTypes...)
	if r.UnconsolidatedThroughputs != nil {
		for _, wt := range r.WorkerTypes {
			cols = append(cols, wt+" (spread)")
		}
	}
	return cols
}

func (c *ClusterPage) effectiveRows() []tableRow {
	r := c.App.Cluster.Result
	out := make([]tableRow, len(r.Jobs))
	for m, name := range r.Jobs {
		speedup := "—"
		if r.Baseline[m] > 0 {
			speedup = fmt.Sprintf("%.2f×", r.Effective[m]/r.Baseline[m])
		}
		out[m] = tableRow{Index: m, Cells: []string{name, num(r.Effective[m]), num(r.Baseline[m]), speedup}}
	}
	return out
}

// reallocate solves the Cluster page's policy.
func (a *App) reallocate() {
	start := a.browser.NowMillis()
	res, err := app.Allocate(context.Background(), a.State.Cluster)
	a.Cluster = ClusterView{Result: res}
	if err != nil {
		a.Cluster.Err = err.Error()
	}
	a.Cluster.Millis = a.browser.NowMillis() - start
}

// setCluster applies a change to the Cluster inputs if it validates.
func (a *App) setCluster(field string, change func(c *request.Cluster) error) {
	next := a.State.Cluster
	next.GPUs = append([]int(nil), next.GPUs...)
	next.Jobs = append([]request.Job(nil), next.Jobs...)
	err := change(&next)
	if err == nil {
		err = next.Validate()
	}
	if err != nil {
		a.Err = fmt.Sprintf("cluster.%s: %v", field, err)
		return
	}
	a.State.Cluster = next
	a.changed()
}

// SetClusterWorkload switches between the paper example (its one V100 and
// one K80) and the job list on Gavel's types (the default cluster's
// whole servers); the job list is kept.
func (a *App) SetClusterWorkload(w string) {
	a.setCluster("workload", func(c *request.Cluster) error {
		c.Workload, c.WorkerTypes = w, nil
		switch w {
		case request.WorkloadPaper:
			c.GPUs = request.PaperCluster().GPUs
		case request.WorkloadJobTypes:
			c.GPUs = request.DefaultCluster().GPUs
		}
		return nil
	})
}

// wholeServers is the fewest whole servers of perServer GPUs with room
// for a job of scale factor 8 (Gavel's largest).
func wholeServers(perServer int) int {
	return perServer * ((8 + perServer - 1) / perServer)
}

// gpusLabel labels a GPU type's count input with its server size.
func (c *ClusterPage) gpusLabel(wt string) string {
	s, err := app.ServerOf(wt)
	if err != nil {
		return wt + " GPUs"
	}
	return fmt.Sprintf("%s GPUs (servers of %d)", wt, s.GPUsPerServer)
}

// gpusTitle says where a GPU type's server size comes from.
func (c *ClusterPage) gpusTitle(wt string) string {
	s, err := app.ServerOf(wt)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d GPUs per server (%s): a multi-GPU job runs consolidated on one server of its type (§5.3.1). Source: %s", s.GPUsPerServer, s.Name, s.Source)
}

// workerTypesText is the cluster's GPU types as the text input shows them.
func (c *ClusterPage) workerTypesText() string { return strings.Join(c.workerTypes(), ", ") }

// gpuIDs lists the GPUs a worker type may name, for the input's tooltip.
func (c *ClusterPage) gpuIDs() string { return strings.Join(app.GPUIDs(), ", ") }

// SetClusterWorkerTypes sets the job-types cluster's GPU types from a
// comma-separated list of Gavel's names or gpus.json ids; a type kept
// keeps its GPU count, a new one gets whole servers with room for a job
// of 8 GPUs.
func (a *App) SetClusterWorkerTypes(value string) {
	a.setCluster("worker_types", func(c *request.Cluster) error {
		var types []string
		for _, f := range strings.Split(value, ",") {
			if f = strings.TrimSpace(f); f != "" {
				types = append(types, f)
			}
		}
		old, counts := c.Types(), make([]int, len(types))
		for i, wt := range types {
			if k := slices.Index(old, wt); k >= 0 {
				counts[i] = c.GPUs[k]
				continue
			}
			s, err := app.ServerOf(wt)
			if err != nil {
				return err
			}
			counts[i] = wholeServers(s.GPUsPerServer)
		}
		c.WorkerTypes, c.GPUs = types, counts
		if slices.Equal(types, request.WorkerTypes(request.WorkloadJobTypes)) {
			c.WorkerTypes = nil // Gavel's: the default, left out of links
		}
		return nil
	})
}

// SetClusterPolicy picks the Gavel policy.
func (a *App) SetClusterPolicy(p string) {
	a.setCluster("policy", func(c *request.Cluster) error { c.Policy = p; return nil })
}

// SetPlacementSensitive turns placement sensitivity (§5.3.1) on or off.
func (a *App) SetPlacementSensitive(on bool) {
	a.setCluster("placement_sensitive", func(c *request.Cluster) error { c.PlacementSensitive = on; return nil })
}

// SetClusterGPUs sets the GPU count of worker type i.
func (a *App) SetClusterGPUs(i int, value string) {
	a.setCluster("gpus", func(c *request.Cluster) error {
		n, err := strconv.Atoi(value)
		c.GPUs[i] = n
		return err
	})
}

// SetJob sets one field of job i.
func (a *App) SetJob(i int, field, value string) {
	a.setCluster("jobs", func(c *request.Cluster) error {
		var err error
		switch field {
		case "type":
			c.Jobs[i].Type = value
		case "scale":
			c.Jobs[i].Scale, err = strconv.Atoi(value)
		case "weight":
			c.Jobs[i].Weight, err = strconv.ParseFloat(value, 64)
		case "steps":
			c.Jobs[i].Steps, err = parseOptional(value)
		case "slo":
			c.Jobs[i].SLOHours, err = parseOptional(value)
		}
		return err
	})
}

// AddJob appends a job of the first job type.
func (a *App) AddJob() {
	a.setCluster("jobs", func(c *request.Cluster) error {
		c.Jobs = append(c.Jobs, request.Job{Type: app.JobTypes()[0], Scale: 1, Weight: 1})
		return nil
	})
}

// AddPlannedJob appends the Plan page's current model as a job whose
// throughput on each GPU type is the planner's prediction.
func (a *App) AddPlannedJob() {
	a.setCluster("jobs", func(c *request.Cluster) error {
		job, err := app.PlannedJob(context.Background(), a.State.Plan, c.Types())
		c.Jobs = append(c.Jobs, job)
		return err
	})
}

// parseOptional parses a number input where empty means 0 (not given).
func parseOptional(value string) (float64, error) {
	if value == "" {
		return 0, nil
	}
	return strconv.ParseFloat(value, 64)
}

// optional shows 0 (not given) as an empty input.
func optional(v float64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// throughputCell is one cell of the throughput matrix T with its source.
type throughputCell struct {
	Text, Title string
	Zero        bool
}

// throughputRows is T (then, when placement-sensitive, the unconsolidated
// throughputs) with where each number came from; a 0 shows its reason.
func (c *ClusterPage) throughputRows() [][]throughputCell {
	r := c.App.Cluster.Result
	out := make([][]throughputCell, len(r.Jobs))
	for m, name := range r.Jobs {
		out[m] = append([]throughputCell{{Text: name}}, throughputCells(r.Throughputs[m], r.Sources[m])...)
		if r.UnconsolidatedThroughputs == nil {
			continue
		}
		if src := r.UnconsolidatedSources[m]; src != nil {
			out[m] = append(out[m], throughputCells(r.UnconsolidatedThroughputs[m], src)...)
			continue
		}
		for range r.WorkerTypes {
			out[m] = append(out[m], throughputCell{Text: "—", Title: "a single-GPU job always runs consolidated"})
		}
	}
	return out
}

// throughputCells shows one job's throughputs with their sources.
func throughputCells(row []float64, sources []string) []throughputCell {
	out := make([]throughputCell, len(row))
	for j, v := range row {
		out[j] = throughputCell{Text: fmt.Sprintf("%.3g", v), Title: sources[j], Zero: v == 0}
		if v == 0 {
			out[j].Text = "0 — " + sources[j]
		}
	}
	return out
}

func (c *ClusterPage) zeroClass(zero bool) string {
	if zero {
		return "infeasible wrap"
	}
	return ""
}

// RemoveJob deletes job i.
func (a *App) RemoveJob(i int) {
	a.setCluster("jobs", func(c *request.Cluster) error {
		c.Jobs = append(c.Jobs[:i], c.Jobs[i+1:]...)
		return nil
	})
}

func (c *ClusterPage) maxTraceJobs() int { return request.MaxTraceJobs }

// SetTrace sets the simulated trace's size ("jobs") or arrival rate ("rate").
func (a *App) SetTrace(field, value string) {
	a.setCluster("trace", func(c *request.Cluster) error {
		var err error
		if field == "jobs" {
			c.TraceJobs, err = strconv.Atoi(value)
		} else {
			c.TraceJobsPerHour, err = strconv.ParseFloat(value, 64)
		}
		return err
	})
}

// SetTraceWorkload picks what the simulated trace's jobs are drawn from:
// Gavel's job types or the jobs listed on the page (request.TraceListedJobs).
func (a *App) SetTraceWorkload(w string) {
	a.setCluster("trace_workload", func(c *request.Cluster) error { c.TraceWorkload = w; return nil })
}

// traceNote says what the simulated trace is made of.
func (c *ClusterPage) traceNote() string {
	jobs := "Jobs of Gavel's 26 job types, at scale factors 1, 2, 4 or 8,"
	if c.App.State.Cluster.TraceWorkload == request.TraceListedJobs {
		jobs = "Copies of the jobs listed above (each with its type, scale factor and priority weight; planned ones at the planner's throughputs, never sharing GPUs)"
	}
	return jobs + " arrive as a Poisson process, each lasting 10^U(1.5, 3) minutes on a V100 (10^U(3, 4) for one in five, §5.7.1); the round-based mechanism (6-minute rounds, Algorithm 2) runs them under the policy."
}

func (c *ClusterPage) simMetrics() []kv {
	r := c.App.Sim.Result
	return []kv{
		{"policy", policyTitle(r.Policy), "the Gavel policy simulated (" + r.Policy + ")"},
		{"average JCT", fmt.Sprintf("%.2f h", r.AvgJCTSeconds/3600), "mean job completion time (finish − arrival) over the trace (§5.7.1)"},
		{"makespan", fmt.Sprintf("%.2f h", r.MakespanSeconds/3600), "first arrival to last completion"},
		{"utilization", pct(r.Utilization), "busy GPU-time / available GPU-time over the makespan"},
		{"finish-time fairness", fmt.Sprintf("avg %.2f, max %.2f", r.AvgFTF, r.MaxFTF), "ρ = JCT / JCT with 1/n of the cluster (§5.4.2, Themis)"},
		{"rounds", strconv.Itoa(r.Rounds), "6-minute scheduling rounds (Algorithm 2)"},
		{"jobs by type", traceMix(r.Jobs), "how many of the trace's jobs were of each job type and scale factor"},
	}
}

func (c *ClusterPage) cdfSVG() vugu.HTML {
	r := c.App.Sim.Result
	jcts := make([]float64, len(r.Jobs))
	for i, j := range r.Jobs {
		jcts[i] = j.JCTSeconds / 3600
	}
	return vugu.HTML(cdfSVG(jcts, "job completion time (hours)"))
}

func (c *ClusterPage) utilizationSVG() vugu.HTML {
	return vugu.HTML(utilizationSVG(c.App.Sim.Result.UtilizationOverTime))
}
