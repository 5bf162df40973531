package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"pipeplan/app"
)

func init() {
	register("gavel simulate", command{
		summary: "simulate a job trace on a heterogeneous cluster under a Gavel policy",
		run:     runGavelSimulate,
	})
}

// runGavelSimulate turns the flags into an app.GavelTrace, simulates it
// with app.SimulateGavelTrace and prints the metrics as JSON or a table.
func runGavelSimulate(args []string, stdout io.Writer) error {
	fs := newFlagSet("gavel simulate")
	cluster := fs.String("cluster", "36:36:36", "GPU counts "+strings.ToUpper(strings.Join(app.GavelTraceWorkerTypes(), ":")))
	priceList := fs.String("price-list", app.DefaultPriceListID(), "price list of the cost metric and cost policies (gpuprofiles/cloud.json)")
	perServer := fs.Int("gpus-per-server", app.DefaultGPUsPerServer, "GPUs per server (placement packs multi-GPU jobs on servers)")
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
	round := fs.Float64("round", app.DefaultRoundSeconds, "round length in seconds")
	spaceSharing := fs.Bool("space-sharing", false, "offer co-located job pairs to the policy (implied by *_packed policies)")
	placement := fs.Bool("placement-sensitive", false, "give heterogeneity-aware policies the unconsolidated throughputs of multi-GPU jobs (§5.3.1)")
	perJob := fs.Bool("per-job", false, "include every window job's outcome in the JSON output")
	progress := fs.Bool("progress", false, "report completed window jobs on stderr while simulating")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *policyName == "" {
		return fmt.Errorf("gavel simulate: --policy: required (known: %s)", strings.Join(app.PolicyNames(), ", "))
	}
	in := app.GavelTrace{Cluster: *cluster, PriceList: *priceList, GPUsPerServer: *perServer, Policy: *policyName,
		TraceName: *traceFile, NumJobs: *numJobs, JobsPerHour: *rate, Seed: *seed, MultiGPU: *multiGPU,
		PriorityWeights: *priorities, SLOs: *slos, RoundSeconds: *round, SpaceSharing: *spaceSharing,
		PlacementSensitive: *placement, PerJob: *perJob}
	var err error
	if in.WindowFrom, in.WindowTo, err = parseWindow(*window); err != nil {
		return err
	}
	if *traceFile != "" {
		if in.Trace, err = os.ReadFile(*traceFile); err != nil {
			return fmt.Errorf("gavel simulate: --trace: %w", err)
		}
	} else {
		if *models != "" {
			in.Models = strings.Split(*models, ",")
		}
		if in.DurationChoicesSeconds, err = parseDurationsDays(*durationsDays); err != nil {
			return err
		}
	}
	if *progress {
		in.Progress = func(done, total int) { fmt.Fprintf(os.Stderr, "\rsimulate: %d/%d window jobs completed", done, total) }
		defer fmt.Fprintln(os.Stderr)
	}
	out, err := app.SimulateGavelTrace(context.Background(), in)
	if err != nil {
		return fmt.Errorf("gavel simulate: %w", flagError(err, map[string]string{
			"policy": "policy", "cluster": "cluster", "price_list": "price-list", "trace": "trace " + *traceFile, "models": "models",
		}))
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	return printSimulation(stdout, out)
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
func printSimulation(w io.Writer, o *app.GavelTraceResult) error {
	tw := newTable(w)
	r := o.SimResult
	rows := [][2]string{
		{"policy", r.Policy},
		{"cluster (" + strings.ToUpper(strings.Join(app.GavelTraceWorkerTypes(), ":")) + ")", o.Cluster},
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
