// Package engine connects the playground to the planning core: it turns the
// UI's inputs into core requests, runs the planners and shapes the answers
// for display, for the JS API (pipeplan.plan) and for the server's /api/plan.
package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"pipeplan/gpuprofiles"
	"pipeplan/ui/state"
)

// ModelPreset is one model the Plan page offers.
type ModelPreset struct {
	// ID is the stable id the URL state stores.
	ID string `json:"id"`
	// Name is the display name.
	Name string `json:"name"`
}

// Models lists the model presets.
func Models() []ModelPreset {
	return []ModelPreset{{ID: "gpt3-175b", Name: "GPT-3 175B"}}
}

// GPUOption is one GPU the cluster inputs offer.
type GPUOption struct {
	ID, Name string
}

// GPUs lists the embedded GPU profiles.
func GPUs() []GPUOption {
	var out []GPUOption
	for _, g := range gpuprofiles.All() {
		out = append(out, GPUOption{ID: g.ID, Name: g.Name})
	}
	return out
}

// Result is the planner's answer for the Plan page.
type Result struct{}

// Plan runs the chosen planner on the Plan page's inputs.
func Plan(in state.Plan) (Result, error) {
	return Result{}, fmt.Errorf("planner %q: not wired into the playground yet", in.Planner)
}

// MaxRequestBytes bounds a JSON request of PlanJSON.
const MaxRequestBytes = 64 << 10

// ParseRequest decodes and validates a JSON request (state.Plan's fields).
// Unknown fields and trailing data are errors.
func ParseRequest(data []byte) (state.Plan, error) {
	var p state.Plan
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
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := Plan(req)
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}
