package gavel

import (
	"context"
	"fmt"
	"sort"
	"strings"
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

// registry maps policy names to constructors.
var registry = map[string]func(o policyOptions) (func(ctx context.Context, inst *Instance) (*Allocation, error), error){}

// registerPolicy adds a policy constructor; names are unique.
func registerPolicy(name string, build func(o policyOptions) (func(ctx context.Context, inst *Instance) (*Allocation, error), error)) {
	if _, dup := registry[name]; dup {
		panic("gavel: duplicate policy " + name)
	}
	registry[name] = build
}

// SpaceSharing reports whether the policy named name co-locates job pairs
// (the "_packed" policies, §5.3.1 space sharing): its instances need Pairs.
func SpaceSharing(name string) bool { return strings.HasSuffix(name, "_packed") }

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
	build, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (known: %v)", name, PolicyNames())
	}
	var o policyOptions
	for _, opt := range opts {
		opt(&o)
	}
	f, err := build(o)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", name, err)
	}
	return policyFunc{name: name, allocate: f}, nil
}
