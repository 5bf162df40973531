// Package engine connects the playground to the planning core: it turns the
// UI's inputs into core requests, runs the planners and shapes the answers
// for display, for the JS API (pipeplan.plan) and for the server's /api/plan.
package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"pipeplan/app/request"
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
}

// GPUs lists the embedded GPU profiles.
func GPUs() []GPUOption {
	var out []GPUOption
	for _, g := range gpuprofiles.All() {
		o := GPUOption{ID: g.ID, Name: g.Name, MemoryBytes: g.MemoryBytes, PeerBandwidthBytesPerSec: g.PeerBandwidthBytesPerSec()}
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

// MaxRequestBytes bounds a JSON request of PlanJSON.
const MaxRequestBytes = 64 << 10

// ParseRequest decodes and validates a JSON request (request.Plan's fields);
// omitted fields keep the Plan page's defaults. Unknown fields and trailing
// data are errors.
func ParseRequest(data []byte) (request.Plan, error) {
	p := request.Default().Plan
	if len(data) > MaxRequestBytes {
		return p, fmt.Errorf("request: %d bytes is over the %d-byte limit", len(data), MaxRequestBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("request: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return p, fmt.Errorf("request: trailing data after the JSON object")
	}
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("request: %w", err)
	}
	return p, nil
}

// PlanJSON runs Plan on a JSON request and returns the result as JSON: the
// JS API pipeplan.plan and POST /api/plan.
func PlanJSON(ctx context.Context, data []byte) ([]byte, error) {
	req, err := ParseRequest(data)
	if err != nil {
		return nil, err
	}
	res, err := Plan(ctx, req)
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}
