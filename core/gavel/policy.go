package gavel

import (
	"context"
	"fmt"
	"sort"
)

// Option configures a policy built by PolicyByName.
type Option func(*policyOptions)

// policyOptions holds the settings some policies need.
type policyOptions struct {
	budgetDollars  float64
	entityPolicies map[string]string
}

// WithBudget sets the cost budget B in dollars of the
// min_makespan_budget_perf policy (§6.4.3).
func WithBudget(dollars float64) Option {
	return func(o *policyOptions) { o.budgetDollars = dollars }
}

// WithEntityPolicy sets the policy inside one entity of the hierarchical
// water-filling policy: "fairness" (the default) or "fifo" (§5.4.3).
func WithEntityPolicy(entity, policy string) Option {
	return func(o *policyOptions) {
		if o.entityPolicies == nil {
			o.entityPolicies = map[string]string{}
		}
		o.entityPolicies[entity] = policy
	}
}

// policyFunc adapts a function to the Policy interface.
type policyFunc struct {
	name     string
	allocate func(ctx context.Context, inst *Instance) (*Allocation, error)
}

// Name returns the policy's registered name.
func (p policyFunc) Name() string { return p.name }

// Allocate validates inst and solves the policy; an instance without jobs
// gets an empty allocation with objective 0. Heterogeneity-aware policies
// on an instance with unconsolidated throughputs are placement-sensitive
// (see Instance.withPlacements) and also fill Allocation.UnconsolidatedX.
func (p policyFunc) Allocate(ctx context.Context, inst *Instance) (*Allocation, error) {
	if err := inst.Validate(); err != nil {
		return nil, err
	}
	if len(inst.Jobs) == 0 {
		return &Allocation{X: [][]float64{}}, nil
	}
	solved := inst
	if placementSensitive(p.name, inst) {
		solved = inst.withPlacements()
	}
	a, err := p.allocate(ctx, solved)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", p.name, err)
	}
	if solved != inst {
		foldPlacements(len(inst.WorkerTypes), a)
	}
	return a, nil
}

// PolicyInfo describes a registered policy: the one place its traits are
// defined. Callers (app, cli, ui) ask for them with LookupPolicy or Policies
// instead of reading them from the name; a new policy is one registerPolicy
// call in its own file.
type PolicyInfo struct {
	// Name is the CLI name, e.g. "max_min_fairness_perf".
	Name string `json:"name"`
	// Title is the human-readable name, e.g. "Max-min fairness (LAS)".
	Title string `json:"title"`
	// Section is where the dissertation defines it, e.g. "§5.4.1, Table 5.1".
	Section string `json:"section"`
	// Objective is the optimization problem in words and symbols.
	Objective string `json:"objective"`
	// HeterogeneityAware is true for policies that see per-type
	// throughputs (§5.3); agnostic ones see every GPU as equal and are
	// never placement-sensitive.
	HeterogeneityAware bool `json:"heterogeneity_aware"`
	// SpaceSharing is true for policies that co-locate job pairs (§5.3.1):
	// their instances need Pairs.
	SpaceSharing bool `json:"space_sharing"`
	// Baseline is the heterogeneity-agnostic policy to compare it with: its
	// agnostic counterpart, or agnostic max-min fairness when it has none
	// (the agnostic policies are their own baseline).
	Baseline string `json:"baseline"`
	// NeedsSteps is true when the policy reads each job's steps
	// (Job.NumSteps or StepsRemaining); NeedsPrices when it reads
	// Instance.PricePerHour.
	NeedsSteps  bool `json:"needs_steps,omitempty"`
	NeedsPrices bool `json:"needs_prices,omitempty"`
}

// policyBuilder makes a policy's allocation function from its options.
type policyBuilder func(o policyOptions) (func(ctx context.Context, inst *Instance) (*Allocation, error), error)

// registered is a registry entry.
type registered struct {
	info  PolicyInfo
	build policyBuilder
}

// registry maps policy names to their traits and constructors.
var registry = map[string]registered{}

// registerPolicy adds a policy; names are unique and a baseline must be
// an agnostic policy (checked by the package tests, which see every entry).
func registerPolicy(info PolicyInfo, build policyBuilder) {
	if _, dup := registry[info.Name]; dup {
		panic("gavel: duplicate policy " + info.Name)
	}
	if info.Baseline == "" {
		info.Baseline = "max_min_fairness"
	}
	registry[info.Name] = registered{info: info, build: build}
}

// LookupPolicy returns the traits of the policy named name.
func LookupPolicy(name string) (PolicyInfo, bool) {
	r, ok := registry[name]
	return r.info, ok
}

// SpaceSharing reports whether the policy named name co-locates job pairs
// (§5.3.1 space sharing): its instances need Pairs.
func SpaceSharing(name string) bool { return registry[name].info.SpaceSharing }

// Policies lists every policy's traits, sorted by name.
func Policies() []PolicyInfo {
	out := make([]PolicyInfo, 0, len(registry))
	for _, r := range registry {
		out = append(out, r.info)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// PolicyNames lists the names PolicyByName accepts, sorted.
func PolicyNames() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// PolicyByName returns the policy with the given name (see PolicyNames),
// e.g. "max_min_fairness_perf".
func PolicyByName(name string, opts ...Option) (Policy, error) {
	r, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (known: %v)", name, PolicyNames())
	}
	var o policyOptions
	for _, opt := range opts {
		opt(&o)
	}
	f, err := r.build(o)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", name, err)
	}
	return policyFunc{name: name, allocate: f}, nil
}
