package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"pipeplan/core/gavel"
	"pipeplan/gpuprofiles"
)

func init() {
	register("gavel simulate", command{
		summary: "simulate a job trace on a heterogeneous cluster under a Gavel policy",
		run:     runGavelSimulate,
	})
}

// gavelSimulateOutput is the JSON output of "gavel simulate": the settings
// followed by the metrics.
type gavelSimulateOutput struct {
	Cluster     string  `json:"cluster"`
	Trace       string  `json:"trace,omitempty"`
	NumJobs     int     `json:"num_jobs"`
	JobsPerHour float64 `json:"jobs_per_hour,omitempty"`
	Seed        uint64  `json:"seed"`
	MultiGPU    bool    `json:"multi_gpu,omitempty"`
	*gavel.SimResult
}

func runGavelSimulate(args []string, stdout io.Writer) error {
	fs := newFlagSet("gavel simulate")
	types := simulateWorkerTypes()
	cluster := fs.String("cluster", "36:36:36", "GPU counts "+strings.ToUpper(strings.Join(types, ":")))
	priceList := fs.String("price-list", gpuprofiles.DefaultPriceList().ID, "price list of the cost metric and cost policies (gpuprofiles/cloud.json)")
	perServer := fs.Int("gpus-per-server", gavel.DefaultGPUsPerServer, "GPUs per server (placement packs multi-GPU jobs on servers)")
	policyName := fs.String("policy", "", "policy name, e.g. max_min_fairness_perf (required)")
	numJobs := fs.Int("jobs", 100, "number of jobs to generate")
	rate := fs.Float64("rate", 0, "Poisson arrival rate in jobs/hour (0: static trace, all jobs at t=0)")
	seed := fs.Uint64("seed", 0, "random seed of the generated trace")
	multiGPU := fs.Bool("multi-gpu", false, "draw scale factors 1/2/4/8 (continuous-multiple) instead of all 1")
	priorities := fs.Bool("priorities", false, "give 20% of generated jobs priority weight 5")
	slos := fs.Bool("slos", false, "give generated jobs SLOs of 1.2, 2 or 10 times their duration")
	models := fs.String("models", "", "comma-separated job types to draw from (default all 26)")
	durationsDays := fs.String("durations-days", "", "comma-separated job durations in days to draw from (default: §5.7.1's distribution)")
	window := fs.String("window", "", "FROM:TO job IDs whose average JCT is reported (default all)")
	traceFile := fs.String("trace", "", "Gavel trace file to simulate instead of generating one")
	round := fs.Float64("round", gavel.DefaultRoundSeconds, "round length in seconds")
	spaceSharing := fs.Bool("space-sharing", false, "offer co-located job pairs to the policy (implied by *_packed policies)")
	placement := fs.Bool("placement-sensitive", false, "give heterogeneity-aware policies the unconsolidated throughputs of multi-GPU jobs (§5.3.1)")
	perJob := fs.Bool("per-job", false, "include every window job's outcome in the JSON output")
	progress := fs.Bool("progress", false, "report completed window jobs on stderr while simulating")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *policyName == "" {
		return fmt.Errorf("gavel simulate: --policy: required (known: %s)", strings.Join(gavel.PolicyNames(), ", "))
	}
	policy, err := gavel.PolicyByName(*policyName)
	if err != nil {
		return fmt.Errorf("gavel simulate: --policy: %w", err)
	}
	spec, err := gavel.ParseClusterSpec(*cluster, types)
	if err != nil {
		return fmt.Errorf("gavel simulate: --cluster: %w", err)
	}
	list, err := gpuprofiles.PriceListByID(*priceList)
	if err != nil {
		return fmt.Errorf("gavel simulate: --price-list: %w", err)
	}
	prices, err := list.ForWorkerTypes(types)
	if err != nil {
		return fmt.Errorf("gavel simulate: --price-list: %w", err)
	}
	spec.GPUsPerServer = []int{*perServer, *perServer, *perServer}
	from, to, err := parseWindow(*window)
	if err != nil {
		return err
	}
	out := gavelSimulateOutput{Cluster: *cluster, Trace: *traceFile, Seed: *seed}
	var jobs []gavel.Job
	if *traceFile != "" {
		data, err := os.ReadFile(*traceFile)
		if err != nil {
			return fmt.Errorf("gavel simulate: --trace: %w", err)
		}
		if jobs, err = gavel.ParseTrace(data); err != nil {
			return fmt.Errorf("gavel simulate: --trace %s: %w", *traceFile, err)
		}
	} else {
		out.JobsPerHour, out.MultiGPU = *rate, *multiGPU
		cfg := gavel.TraceConfig{NumJobs: *numJobs, JobsPerHour: *rate, Seed: *seed,
			MultiGPU: *multiGPU, PriorityWeights: *priorities, SLOs: *slos}
		if cfg.JobTypes, err = selectJobTypes(*models); err != nil {
			return err
		}
		if cfg.DurationChoicesSeconds, err = parseDurationsDays(*durationsDays); err != nil {
			return err
		}
		if jobs, err = gavel.GenerateTrace(cfg); err != nil {
			return fmt.Errorf("gavel simulate: %w", err)
		}
	}
	out.NumJobs = len(jobs)
	cfg := gavel.SimConfig{
		Cluster: spec, Policy: policy, Jobs: jobs, RoundSeconds: *round,
		SpaceSharing:       *spaceSharing || gavel.SpaceSharing(*policyName),
		PlacementSensitive: *placement,
		WindowFrom:         from, WindowTo: to,
		PricePerHour: prices,
	}
	if *progress {
		cfg.Progress = func(done, total int) { fmt.Fprintf(os.Stderr, "\rsimulate: %d/%d window jobs completed", done, total) }
		defer fmt.Fprintln(os.Stderr)
	}
	res, err := gavel.Simulate(context.Background(), cfg)
	if err != nil {
		return fmt.Errorf("gavel %w", err)
	}
	if !*perJob {
		res.Jobs = nil
	}
	out.SimResult = res
	if *asJSON {
		return writeJSON(stdout, out)
	}
	return printSimulation(stdout, out)
}

// simulateWorkerTypes is the order of --cluster's counts: Gavel's worker
// types slowest first, K80:P100:V100 (gpuprofiles lists them fastest first).
func simulateWorkerTypes() []string {
	types := gpuprofiles.GavelWorkerTypeNames()
	slices.Reverse(types)
	return types
}

// selectJobTypes returns the job table's types named in the comma-separated
// list (nil for "": all types).
func selectJobTypes(list string) ([]gavel.JobType, error) {
	if list == "" {
		return nil, nil
	}
	table := gavel.DefaultJobTable()
	var out []gavel.JobType
	for _, name := range strings.Split(list, ",") {
		i := slices.IndexFunc(table, func(jt gavel.JobType) bool { return jt.Model == strings.TrimSpace(name) })
		if i < 0 {
			return nil, fmt.Errorf("gavel simulate: --models: unknown job type %q", name)
		}
		out = append(out, table[i])
	}
	return out, nil
}

// parseDurationsDays parses a comma-separated list of durations in days into
// seconds (nil for "").
func parseDurationsDays(list string) ([]float64, error) {
	if list == "" {
		return nil, nil
	}
	var out []float64
	for _, f := range strings.Split(list, ",") {
		d, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(d > 0) || math.IsInf(d*86400, 0) {
			return nil, fmt.Errorf("gavel simulate: --durations-days: want positive numbers, got %q", f)
		}
		out = append(out, d*86400)
	}
	return out, nil
}

// parseWindow parses "FROM:TO" ("" means every job).
func parseWindow(s string) (from, to int, err error) {
	if s == "" {
		return 0, 0, nil
	}
	a, b, ok := strings.Cut(s, ":")
	from, errA := strconv.Atoi(a)
	to, errB := strconv.Atoi(b)
	if !ok || errA != nil || errB != nil || from < 0 || to <= from {
		return 0, 0, fmt.Errorf("gavel simulate: --window: want FROM:TO with 0 <= FROM < TO, got %q", s)
	}
	return from, to, nil
}

// printSimulation prints the metrics as a table.
func printSimulation(w io.Writer, o gavelSimulateOutput) error {
	tw := newTable(w)
	r := o.SimResult
	rows := [][2]string{
		{"policy", r.Policy},
		{"cluster (" + strings.ToUpper(strings.Join(simulateWorkerTypes(), ":")) + ")", o.Cluster},
		{"jobs in trace / completed", fmt.Sprintf("%d / %d", o.NumJobs, r.JobsCompleted)},
		{"window jobs", strconv.Itoa(r.WindowJobs)},
		{"average JCT", fmt.Sprintf("%.2f h", r.AvgJCTSeconds/3600)},
		{"makespan", fmt.Sprintf("%.2f h", r.MakespanSeconds/3600)},
		{"finish-time fairness (avg / max)", fmt.Sprintf("%.3f / %.3f", r.AvgFTF, r.MaxFTF)},
		{"utilization", fmt.Sprintf("%.1f %%", 100*r.Utilization)},
		{"multi-GPU time unconsolidated", fmt.Sprintf("%.1f %%", 100*r.UnconsolidatedShare)},
		{"cost", fmt.Sprintf("$%.2f", r.CostDollars)},
		{"SLO violations", fmt.Sprintf("%d of %d", r.SLOViolations, r.JobsWithSLO)},
		{"rounds / allocations / lease renewals", fmt.Sprintf("%d / %d / %d", r.Rounds, r.Allocations, r.LeaseRenewals)},
	}
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], row[1])
	}
	return tw.Flush()
}
