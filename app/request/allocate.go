package request

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// Allocate is a Gavel allocation request on an LP instance: the flags of
// "pipeplan gavel allocate", the body of POST /api/v1/gavel/allocate and
// the arguments of the JS API's pipeplan.allocate.
type Allocate struct {
	// Instance is the instance in the JSON schema of Gavel's LP instances
	// (gavel.ParseInstance validates it).
	Instance json.RawMessage `json:"instance"`
	// Pairs, if set, are the co-located job pairs (a Gavel *.pairs.json) of
	// a space-sharing ("_packed") policy; without them such a policy gets
	// the pairs of the embedded throughput table.
	Pairs json.RawMessage `json:"pairs,omitempty"`
	// Policy is a Gavel policy name (gavel.PolicyNames).
	Policy string `json:"policy"`
	// BudgetDollars is the cost budget of min_makespan_budget_perf.
	BudgetDollars float64 `json:"budget_dollars,omitempty"`
	// PricesPerHour, if set, replace the instance's price per GPU-hour of
	// each worker type, in instance order (the cost policies); the
	// instance's validation checks them.
	PricesPerHour []float64 `json:"prices_per_hour,omitempty"`
	// PlacementSensitive takes multi-GPU jobs' unconsolidated throughputs
	// from the embedded throughput table unless the instance has
	// unconsolidated_throughputs (§5.3.1).
	PlacementSensitive bool `json:"placement_sensitive,omitempty"`
	// EntityPolicies is the per-entity policy of hierarchical water
	// filling, by entity name (e.g. {"research": "fifo"}).
	EntityPolicies map[string]string `json:"entity_policies,omitempty"`
}

// Limits of an Allocate request.
const (
	// MaxAllocateBodyBytes bounds the JSON of an Allocate request (a
	// 2,048-job instance is about 0.5 MB).
	MaxAllocateBodyBytes = 8 << 20
	// MaxBudgetDollars bounds BudgetDollars.
	MaxBudgetDollars = 1e12
	// MaxEntities bounds EntityPolicies.
	MaxEntities = 64
)

// Validate checks the request's own fields; the instance and pairs are
// checked when the application layer parses them. Errors name the field
// and value.
func (a Allocate) Validate() error {
	if len(a.Instance) == 0 || string(a.Instance) == "null" {
		return fieldErr("instance", "required: a Gavel LP instance (worker_types, num_workers, jobs, throughputs)")
	}
	if a.Policy == "" || len(a.Policy) > 64 {
		return fieldErr("policy", "must name a policy, got %q", clip(a.Policy))
	}
	if !(a.BudgetDollars >= 0 && a.BudgetDollars <= MaxBudgetDollars) {
		return fieldErr("budget_dollars", "must be in [0, %g] dollars, got %v", float64(MaxBudgetDollars), a.BudgetDollars)
	}
	for i, p := range a.PricesPerHour { // their range is the instance's to check
		if math.IsNaN(p) || math.IsInf(p, 0) {
			return fieldErr(fmt.Sprintf("prices_per_hour[%d]", i), "must be a finite number of dollars per GPU-hour, got %v", p)
		}
	}
	if len(a.EntityPolicies) > MaxEntities {
		return fieldErr("entity_policies", "at most %d entities, got %d", MaxEntities, len(a.EntityPolicies))
	}
	for _, e := range a.Entities() {
		if e == "" || len(e) > 64 || a.EntityPolicies[e] == "" || len(a.EntityPolicies[e]) > 64 {
			return fieldErr("entity_policies", "entity %q: must map a name to a policy name, got %q", clip(e), clip(a.EntityPolicies[e]))
		}
	}
	return nil
}

// Entities returns the entity names of EntityPolicies, sorted.
func (a Allocate) Entities() []string {
	names := make([]string, 0, len(a.EntityPolicies))
	for e := range a.EntityPolicies {
		names = append(names, e)
	}
	slices.Sort(names)
	return names
}

// DecodeAllocate decodes and validates a JSON Allocate request; unknown
// fields, trailing data and a body over MaxAllocateBodyBytes are errors.
func DecodeAllocate(data []byte) (Allocate, error) {
	var a Allocate
	if err := decodeStrict(data, MaxAllocateBodyBytes, "", &a); err != nil {
		return a, err
	}
	return a, a.Validate()
}
