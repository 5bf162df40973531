// Package app is pipeplan's application layer: it turns requests
// (pipeplan/app/request) into core calls, runs the planners and the Gavel
// policies, and shapes the answers alike for the page, the JS API
// (pipeplan.plan, pipeplan.allocate), the HTTP API and the CLI, so the same
// input gives the same answer everywhere.
package app

import (
	"context"
	"encoding/json"

	"pipeplan/app/request"
	"pipeplan/core/gavel"
	"pipeplan/core/hw"
	"pipeplan/gpuprofiles"
)

// GPUOption is one GPU the cluster inputs offer.
type GPUOption struct {
	// ID is the gpuprofiles id.
	ID string `json:"id"`
	// Name is the marketing name.
	Name string `json:"name"`
	// MemoryBytes is the GPU's memory capacity.
	MemoryBytes float64 `json:"memory_bytes"`
	// PeerBandwidthBytesPerSec is the default intra-node bandwidth per GPU
	// (its peer fabric, else its host link); Fabric names it.
	PeerBandwidthBytesPerSec float64 `json:"peer_bandwidth_bytes_per_sec"`
	Fabric                   string  `json:"fabric,omitempty"`
	// NetworkBandwidthBytesPerSec is the per-GPU bandwidth between nodes a
	// plan uses when the request gives 0 (the reference server's NICs,
	// gpuprofiles/network.json; 0 if unknown: hw's default then).
	NetworkBandwidthBytesPerSec float64 `json:"network_bandwidth_bytes_per_sec,omitempty"`
}

// GPUs lists the embedded GPU profiles (GPUProfiles) as the cluster inputs offer them.
func GPUs() []GPUOption {
	var out []GPUOption
	for _, g := range GPUProfiles() {
		o := GPUOption{ID: g.ID, Name: g.Name, MemoryBytes: g.MemoryBytes, PeerBandwidthBytesPerSec: g.PeerBandwidthBytesPerSec(),
			NetworkBandwidthBytesPerSec: g.NetworkBandwidthBytesPerSec}
		switch {
		case g.IntraNode != nil && g.IntraNode.BandwidthBytesPerSec > 0:
			o.Fabric = g.IntraNode.Type
		case g.Host != nil:
			o.Fabric = g.Host.Type
		}
		out = append(out, o)
	}
	return out
}

// GPUProfiles is the embedded GPU profiles in full (`pipeplan gpus`).
func GPUProfiles() []hw.GPU { return gpuprofiles.All() }

// PlanJSON runs Plan on a JSON request (request.DecodePlan) and returns
// the result as JSON: the JS API pipeplan.plan.
func PlanJSON(ctx context.Context, data []byte) ([]byte, error) {
	req, err := request.DecodePlan(data)
	if err != nil {
		return nil, err
	}
	res, err := Plan(ctx, req)
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// InstanceAllocation is a Gavel policy's allocation of an LP instance: the
// JSON of "pipeplan gavel allocate --json", POST /api/v1/gavel/allocate and
// the JS API's pipeplan.allocate.
type InstanceAllocation struct {
	gavel.Allocation
	// Policy is the policy's name.
	Policy string `json:"policy"`
	// Instance is the instance as solved: with the request's pairs,
	// prices and unconsolidated throughputs (for labelling a table).
	Instance *gavel.Instance `json:"-"`
}

// UnconsolidatedSuffix marks a worker type whose GPUs are on separate
// servers (Gavel's throughput data, §5.4.1), e.g. "v100_unconsolidated".
const UnconsolidatedSuffix = gavel.UnconsolidatedSuffix

// AllocateInstance solves a Gavel policy (Table 5.1) on the request's LP
// instance, with the co-located pairs of a space-sharing policy (the
// request's, else the embedded throughput table's), the request's prices
// and, when placement-sensitive, the table's unconsolidated throughputs.
// Bad input is a *request.FieldError.
func AllocateInstance(ctx context.Context, req request.Allocate) (InstanceAllocation, error) {
	if err := req.Validate(); err != nil {
		return InstanceAllocation{}, err
	}
	opts := []gavel.Option{gavel.WithBudget(req.BudgetDollars)}
	for _, e := range req.Entities() {
		opts = append(opts, gavel.WithEntityPolicy(e, req.EntityPolicies[e]))
	}
	policy, err := gavel.PolicyByName(req.Policy, opts...)
	if err != nil {
		return InstanceAllocation{}, &request.FieldError{Field: "policy", Msg: err.Error()}
	}
	inst, err := gavel.ParseInstance(req.Instance)
	if err != nil {
		return InstanceAllocation{}, &request.FieldError{Field: "instance", Msg: err.Error()}
	}
	switch {
	case len(req.Pairs) > 0:
		if err := gavel.ParsePairs(req.Pairs, inst); err != nil {
			return InstanceAllocation{}, &request.FieldError{Field: "pairs", Msg: err.Error()}
		}
	case gavel.SpaceSharing(req.Policy):
		if err := gavel.PairsFromTable(inst, gavel.DefaultThroughputs()); err != nil {
			return InstanceAllocation{}, &request.FieldError{Field: "pairs", Msg: "not given, and they cannot be built from the throughput table: " + err.Error()}
		}
	}
	if req.PricesPerHour != nil {
		inst.PricePerHour = req.PricesPerHour
		if err := inst.Validate(); err != nil {
			return InstanceAllocation{}, &request.FieldError{Field: "prices_per_hour", Msg: err.Error()}
		}
	}
	if req.PlacementSensitive && inst.UnconsolidatedThroughputs == nil {
		if err := gavel.UnconsolidatedFromTable(inst, gavel.DefaultThroughputs()); err != nil {
			return InstanceAllocation{}, &request.FieldError{Field: "placement_sensitive", Msg: err.Error()}
		}
	}
	al, err := policy.Allocate(ctx, inst)
	if err != nil {
		return InstanceAllocation{}, err
	}
	return InstanceAllocation{Allocation: *al, Policy: policy.Name(), Instance: inst}, nil
}
