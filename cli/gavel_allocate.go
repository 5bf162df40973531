package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"pipeplan/app"
	"pipeplan/app/request"
)

func init() {
	register("gavel allocate", command{
		summary: "solve a Gavel allocation policy on an LP instance (jobs x worker types)",
		run:     runGavelAllocate,
	})
}

// runGavelAllocate turns the flags into a request.Allocate, solves it with
// app.AllocateInstance (the HTTP API's and the JS API's solver) and prints
// the allocation as JSON or a table.
func runGavelAllocate(args []string, stdout io.Writer) error {
	fs := newFlagSet("gavel allocate")
	instanceFile := fs.String("instance", "", "instance JSON (schema of Gavel's LP instances; required)")
	pairsFile := fs.String("pairs", "", "*.pairs.json of co-located job pairs (packed policies; default: built from the embedded throughput table)")
	policyName := fs.String("policy", "", "policy name (required)")
	budget := fs.Float64("budget", 0, "cost budget in dollars (min_makespan_budget_perf)")
	prices := fs.String("prices", "", "price per GPU-hour of each worker type in instance order, e.g. 0.9,1.46,3.06 (cost policies)")
	placement := fs.Bool("placement-sensitive", false, "take unconsolidated throughputs of multi-GPU jobs from the embedded throughput table unless the instance has unconsolidated_throughputs (§5.3.1)")
	entities := fs.String("entity-policy", "", "per-entity policy of hierarchical water filling, e.g. research=fifo,product=fairness")
	asJSON := fs.Bool("json", false, "print JSON (the same as POST /api/v1/gavel/allocate)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *instanceFile == "" {
		return fmt.Errorf("gavel allocate: --instance: required")
	}
	if *policyName == "" {
		return fmt.Errorf("gavel allocate: --policy: required (known: %s)", strings.Join(app.PolicyNames(), ", "))
	}
	req := request.Allocate{Policy: *policyName, BudgetDollars: *budget, PlacementSensitive: *placement}
	var err error
	if req.Instance, err = os.ReadFile(*instanceFile); err != nil {
		return fmt.Errorf("gavel allocate: %w", err)
	}
	if *pairsFile != "" {
		if req.Pairs, err = os.ReadFile(*pairsFile); err != nil {
			return fmt.Errorf("gavel allocate: %w", err)
		}
	}
	if *entities != "" {
		req.EntityPolicies = map[string]string{}
		for _, kv := range strings.Split(*entities, ",") {
			e, p, ok := strings.Cut(kv, "=")
			if !ok {
				return fmt.Errorf("gavel allocate: --entity-policy: want ENTITY=POLICY, got %q", kv)
			}
			req.EntityPolicies[e] = p
		}
	}
	if *prices != "" {
		var err error
		if req.PricesPerHour, err = parsePrices(*prices); err != nil {
			return fmt.Errorf("gavel allocate: %w", err)
		}
	}
	start := time.Now()
	al, err := app.AllocateInstance(context.Background(), req)
	if err != nil {
		return fmt.Errorf("gavel allocate: %w", flagError(err, map[string]string{
			"instance": "instance " + *instanceFile, "pairs": "pairs " + *pairsFile, "policy": "policy",
			"budget_dollars": "budget", "prices_per_hour": "prices", "placement_sensitive": "placement-sensitive",
			"entity_policies": "entity-policy",
		}))
	}
	if *asJSON {
		return writeJSON(stdout, al)
	}
	return writeAllocationTable(stdout, al, time.Since(start))
}

// parsePrices parses --prices, a comma-separated list of numbers (dollars
// per GPU-hour; the instance's validation checks their range).
func parsePrices(list string) ([]float64, error) {
	var out []float64
	for i, s := range strings.Split(list, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, fmt.Errorf("--prices[%d]: want a number of dollars per GPU-hour, got %q", i, s)
		}
		out = append(out, v)
	}
	return out, nil
}

// writeAllocationTable prints one row per job: its time fraction per worker
// type (and per unconsolidated worker type, when placement-sensitive).
func writeAllocationTable(w io.Writer, al app.InstanceAllocation, took time.Duration) error {
	inst := al.Instance
	fmt.Fprintf(w, "policy %s: objective %.6g, solved in %.3f s\n\n", al.Policy, al.Objective, took.Seconds())
	tw := newTable(w)
	fmt.Fprint(tw, "job\tjob type")
	for _, wt := range inst.WorkerTypes {
		fmt.Fprintf(tw, "\t%s", wt)
	}
	if al.UnconsolidatedX != nil {
		for _, wt := range inst.WorkerTypes {
			fmt.Fprintf(tw, "\t%s%s", wt, app.UnconsolidatedSuffix)
		}
	}
	fmt.Fprintln(tw)
	for m, row := range al.X {
		fmt.Fprintf(tw, "%d\t%s", inst.Jobs[m].ID, inst.Jobs[m].JobType)
		if al.UnconsolidatedX != nil {
			row = append(slices.Clone(row), al.UnconsolidatedX[m]...)
		}
		for _, x := range row {
			fmt.Fprintf(tw, "\t%.4f", x)
		}
		fmt.Fprintln(tw)
	}
	if len(al.PairX) > 0 {
		fmt.Fprintf(tw, "\n%d co-located pairs receive time (pair_allocation in --json)\n", countNonzero(al.PairX))
	}
	return tw.Flush()
}

// countNonzero counts rows with some positive entry.
func countNonzero(rows [][]float64) int {
	n := 0
	for _, r := range rows {
		for _, x := range r {
			if x > 0 {
				n++
				break
			}
		}
	}
	return n
}
