// Package state is the playground's UI state: every input of the three pages
// and the open tab. It is what the URL fragment carries (versioned and
// compressed by core/plan's fragment codec), so a reload, back/forward or a
// shared link restores the same view.
package request

import (
	"fmt"
	"math"
	"slices"

	"pipeplan/core/plan"
)

// Tabs are the pages of the playground, in header order.
var Tabs = []string{"plan", "cluster", "cost"}

// State is the whole UI request.
type State struct {
	// Tab is the open page, one of Tabs.
	Tab string `json:"tab"`
	// Plan holds the Plan page's inputs.
	Plan Plan `json:"plan"`
	// Cluster holds the Cluster page's inputs.
	Cluster Cluster `json:"cluster"`
	// Cost holds the Cost page's inputs.
	Cost Cost `json:"cost"`
}

// Plan holds the inputs of the Plan page: the model (application), the
// cluster (system) and the training options (execution), kept apart.
type Plan struct {
	// Model is a model preset id (see app.Models).
	Model string `json:"model"`
	// GPU is a gpuprofiles id.
	GPU string `json:"gpu"`
	// Nodes is the number of servers.
	Nodes int `json:"nodes"`
	// GPUsPerNode is the number of GPUs in each server.
	GPUsPerNode int `json:"gpus_per_node"`
	// InterNodeGBps is the per-GPU network bandwidth between nodes, in GB/s (10^9 bytes/s).
	InterNodeGBps float64 `json:"inter_node_gbps"`
	// GlobalBatch is the number of samples per optimizer step.
	GlobalBatch int `json:"global_batch"`
	// Planner is the planning algorithm, one of Planners.
	Planner string `json:"planner"`
	// Selected is the rank of the candidate shown in detail (0 = the best).
	Selected int `json:"selected"`
	// Custom holds the dimensions of the "custom" model.
	Custom CustomModel `json:"custom"`
	// Seq overrides the transformer's sequence length; 0 keeps the preset's.
	Seq int `json:"seq"`
	// Precision is the training precision ("" = bf16), one of Precisions.
	Precision string `json:"precision"`
	// Optimizer is a core/cost optimizer name ("" = mixed-precision Adam).
	Optimizer string `json:"optimizer"`
	// ZeRO is the ZeRO stage over data-parallel replicas, 0–3.
	ZeRO int `json:"zero"`
	// Recompute fixes activation recomputation ("" = searched), one of Recomputes.
	Recompute string `json:"recompute"`
	// TrainAmount is what the whole run trains on, for its cost: tokens
	// for a transformer, samples for a layer profile (0 = the page's default).
	TrainAmount float64 `json:"train_amount,omitempty"`
	// PricePerGPUHour prices a GPU-hour in dollars for the run's cost (0 =
	// the GPU's sourced price, if there is one).
	PricePerGPUHour float64 `json:"price_per_gpu_hour,omitempty"`
}

// Limits of the run-cost inputs.
const (
	MaxTrainAmount     = 1e18
	MaxPricePerGPUHour = 1e4
)

// CustomModel is a GPT-style transformer given by its dimensions.
type CustomModel struct {
	Layers int `json:"layers"`
	Hidden int `json:"hidden"`
	Heads  int `json:"heads"`
}

// Choices of the training inputs ("" first: the default).
var (
	Precisions = []string{"", "bf16", "fp16", "fp32", "fp8"}
	Optimizers = []string{"", "mixed-adam", "mixed-adam-fp32-grads", "adam", "sgd"}
	Recomputes = []string{"", "none", "selective", "full"}
)

// Planners are the planner choices of the Plan page; "best" runs all that apply.
var Planners = []string{"best", "ptdp", "2bw", "pipedream", "madpipe"}

// Limits on numeric inputs: large enough for any real cluster, small enough
// that a hostile link cannot ask for an absurd amount of work.
const (
	MaxNodes       = 4096
	MaxGPUsPerNode = 16
	MaxGlobalBatch = 1 << 20
	MaxGBps        = 10000
	MaxSelected    = 1000
	MaxSeq         = 1 << 20
	MaxLayers      = 1024
	MaxHidden      = 1 << 17
	MaxHeads       = 1024
)

// Default is the state of a fresh page: GPT-3 175B on 1024 A100s (128 nodes
// of 8), the configuration of the dissertation's Table 4.1 / Figure 4.1 row.
func Default() State {
	return State{
		Tab: "plan",
		Plan: Plan{
			Model:         "gpt3-175b",
			GPU:           "nvidia-a100-sxm4-80gb",
			Nodes:         128,
			GPUsPerNode:   8,
			InterNodeGBps: 25,
			GlobalBatch:   1536,
			Planner:       "best",
			Custom:        CustomModel{Layers: 32, Hidden: 4096, Heads: 32},
		},
		Cluster: DefaultCluster(),
		Cost:    DefaultCost(),
	}
}

// Validate checks the state's shape (not whether presets exist, which the
// engine checks) and returns the first problem naming the field and value.
func (s State) Validate() error {
	if !slices.Contains(Tabs, s.Tab) {
		return fmt.Errorf("tab: must be one of %v, got %q", Tabs, s.Tab)
	}
	if err := s.Plan.Validate(); err != nil {
		return err
	}
	if err := s.Cluster.Validate(); err != nil {
		return err
	}
	return s.Cost.Validate()
}

// Validate checks the Plan page's inputs; errors name the field and value.
func (p Plan) Validate() error {
	if p.Model == "" {
		return fmt.Errorf("plan.model: must name a model preset, got %q", p.Model)
	}
	if p.GPU == "" {
		return fmt.Errorf("plan.gpu: must name a GPU profile, got %q", p.GPU)
	}
	if err := intIn("plan.nodes", p.Nodes, 1, MaxNodes); err != nil {
		return err
	}
	if err := intIn("plan.gpus_per_node", p.GPUsPerNode, 1, MaxGPUsPerNode); err != nil {
		return err
	}
	if err := intIn("plan.global_batch", p.GlobalBatch, 1, MaxGlobalBatch); err != nil {
		return err
	}
	if math.IsNaN(p.InterNodeGBps) || p.InterNodeGBps <= 0 || p.InterNodeGBps > MaxGBps {
		return fmt.Errorf("plan.inter_node_gbps: must be in (0, %d], got %v", MaxGBps, p.InterNodeGBps)
	}
	if !slices.Contains(Planners, p.Planner) {
		return fmt.Errorf("plan.planner: must be one of %v, got %q", Planners, p.Planner)
	}
	if err := intIn("plan.selected", p.Selected, 0, MaxSelected); err != nil {
		return err
	}
	for _, f := range []struct {
		name      string
		v, lo, hi int
	}{
		{"plan.custom.layers", p.Custom.Layers, 1, MaxLayers}, {"plan.custom.hidden", p.Custom.Hidden, 1, MaxHidden},
		{"plan.custom.heads", p.Custom.Heads, 1, MaxHeads}, {"plan.seq", p.Seq, 0, MaxSeq}, {"plan.zero", p.ZeRO, 0, 3},
	} {
		if err := intIn(f.name, f.v, f.lo, f.hi); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name   string
		v, max float64
	}{{"plan.train_amount", p.TrainAmount, MaxTrainAmount}, {"plan.price_per_gpu_hour", p.PricePerGPUHour, MaxPricePerGPUHour}} {
		if !(f.v >= 0 && f.v <= f.max) {
			return fmt.Errorf("%s: must be a number in [0, %g], got %v", f.name, f.max, f.v)
		}
	}
	for _, f := range []struct {
		name, v string
		list    []string
	}{{"plan.precision", p.Precision, Precisions}, {"plan.optimizer", p.Optimizer, Optimizers}, {"plan.recompute", p.Recompute, Recomputes}} {
		if !slices.Contains(f.list, f.v) {
			return fmt.Errorf("%s: must be one of %q, got %q", f.name, f.list, f.v)
		}
	}
	return nil
}

// Encode returns the URL fragment (without '#') for s.
func Encode(s State) (string, error) {
	if err := s.Validate(); err != nil {
		return "", err
	}
	return plan.EncodeFragment(s)
}

// Decode parses a URL fragment (with or without '#'). An empty fragment is
// the default state, and fields a fragment omits (one made before they
// existed) keep their defaults. On any error it returns the default state
// and the error, so the page can show the error and still render.
func Decode(fragment string) (State, error) {
	if fragment == "" || fragment == "#" {
		return Default(), nil
	}
	s := Default()
	if err := plan.DecodeFragment(fragment, &s); err != nil {
		return Default(), fmt.Errorf("shared link: %w", err)
	}
	if err := s.Validate(); err != nil {
		return Default(), fmt.Errorf("shared link: %w", err)
	}
	return s, nil
}

func intIn(field string, v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("%s: must be in [%d, %d], got %d", field, lo, hi, v)
	}
	return nil
}
