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

	"pipeplan/core/gavel"
)

func init() {
	register("gavel allocate", command{
		summary: "solve a Gavel allocation policy on an LP instance (jobs x worker types)",
		run:     runGavelAllocate,
	})
}

// gavelAllocateOutput is the JSON output of "gavel allocate".
type gavelAllocateOutput struct {
	Objective      float64     `json:"objective"`
	Allocation     [][]float64 `json:"allocation"`
	PairAllocation [][]float64 `json:"pair_allocation,omitempty"`
	// UnconsolidatedAllocation is set for placement-sensitive instances.
	UnconsolidatedAllocation [][]float64 `json:"unconsolidated_allocation,omitempty"`
	SolveSeconds             float64     `json:"solve_seconds"`
}

func runGavelAllocate(args []string, stdout io.Writer) error {
	fs := newFlagSet("gavel allocate")
	instanceFile := fs.String("instance", "", "instance JSON (schema of Gavel's LP instances; required)")
	pairsFile := fs.String("pairs", "", "*.pairs.json of co-located job pairs (packed policies; default: built from the embedded throughput table)")
	policyName := fs.String("policy", "", "policy name (required)")
	budget := fs.Float64("budget", 0, "cost budget in dollars (min_makespan_budget_perf)")
	prices := fs.String("prices", "", "price per GPU-hour of each worker type in instance order, e.g. 0.9,1.46,3.06 (cost policies)")
	placement := fs.Bool("placement-sensitive", false, "take unconsolidated throughputs of multi-GPU jobs from the embedded throughput table unless the instance has unconsolidated_throughputs (§5.3.1)")
	entities := fs.String("entity-policy", "", "per-entity policy of hierarchical water filling, e.g. research=fifo,product=fairness")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *instanceFile == "" {
		return fmt.Errorf("gavel allocate: --instance: required")
	}
	if *policyName == "" {
		return fmt.Errorf("gavel allocate: --policy: required (known: %s)", strings.Join(gavel.PolicyNames(), ", "))
	}
	opts := []gavel.Option{gavel.WithBudget(*budget)}
	if *entities != "" {
		for _, kv := range strings.Split(*entities, ",") {
			e, p, ok := strings.Cut(kv, "=")
			if !ok {
				return fmt.Errorf("gavel allocate: --entity-policy: want ENTITY=POLICY, got %q", kv)
			}
			opts = append(opts, gavel.WithEntityPolicy(e, p))
		}
	}
	policy, err := gavel.PolicyByName(*policyName, opts...)
	if err != nil {
		return fmt.Errorf("gavel allocate: %w", err)
	}
	inst, err := loadAllocateInstance(*instanceFile, *pairsFile, *prices, gavel.SpaceSharing(*policyName))
	if err != nil {
		return fmt.Errorf("gavel allocate: %w", err)
	}
	if *placement && inst.UnconsolidatedThroughputs == nil {
		if err := gavel.UnconsolidatedFromTable(inst, gavel.DefaultThroughputs()); err != nil {
			return fmt.Errorf("gavel allocate: --placement-sensitive: %w", err)
		}
	}
	start := time.Now()
	al, err := policy.Allocate(context.Background(), inst)
	if err != nil {
		return fmt.Errorf("gavel allocate: %w", err)
	}
	out := gavelAllocateOutput{Objective: al.Objective, Allocation: al.X, PairAllocation: al.PairX,
		UnconsolidatedAllocation: al.UnconsolidatedX, SolveSeconds: time.Since(start).Seconds()}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	return writeAllocationTable(stdout, inst, policy.Name(), out)
}

// loadAllocateInstance reads the instance, its pairs (from the file, or the
// embedded throughput table when a packed policy needs them) and prices.
func loadAllocateInstance(instanceFile, pairsFile, prices string, packed bool) (*gavel.Instance, error) {
	data, err := os.ReadFile(instanceFile)
	if err != nil {
		return nil, err
	}
	inst, err := gavel.ParseInstance(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", instanceFile, err)
	}
	switch {
	case pairsFile != "":
		data, err := os.ReadFile(pairsFile)
		if err != nil {
			return nil, err
		}
		if err := gavel.ParsePairs(data, inst); err != nil {
			return nil, fmt.Errorf("%s: %w", pairsFile, err)
		}
	case packed:
		if err := gavel.PairsFromTable(inst, gavel.DefaultThroughputs()); err != nil {
			return nil, fmt.Errorf("--pairs not given and pairs cannot be built from the throughput table: %w", err)
		}
	}
	if prices != "" {
		if inst.PricePerHour, err = parsePrices(prices); err != nil {
			return nil, err
		}
		if err := inst.Validate(); err != nil {
			return nil, fmt.Errorf("--prices: %w", err)
		}
	}
	return inst, nil
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
func writeAllocationTable(w io.Writer, inst *gavel.Instance, policy string, out gavelAllocateOutput) error {
	fmt.Fprintf(w, "policy %s: objective %.6g, solved in %.3f s\n\n", policy, out.Objective, out.SolveSeconds)
	tw := newTable(w)
	fmt.Fprint(tw, "job\tjob type")
	for _, wt := range inst.WorkerTypes {
		fmt.Fprintf(tw, "\t%s", wt)
	}
	if out.UnconsolidatedAllocation != nil {
		for _, wt := range inst.WorkerTypes {
			fmt.Fprintf(tw, "\t%s%s", wt, gavel.UnconsolidatedSuffix)
		}
	}
	fmt.Fprintln(tw)
	for m, row := range out.Allocation {
		fmt.Fprintf(tw, "%d\t%s", inst.Jobs[m].ID, inst.Jobs[m].JobType)
		if out.UnconsolidatedAllocation != nil {
			row = append(slices.Clone(row), out.UnconsolidatedAllocation[m]...)
		}
		for _, x := range row {
			fmt.Fprintf(tw, "\t%.4f", x)
		}
		fmt.Fprintln(tw)
	}
	if len(out.PairAllocation) > 0 {
		fmt.Fprintf(tw, "\n%d co-located pairs receive time (pair_allocation in --json)\n", countNonzero(out.PairAllocation))
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
