package plan

import (
	"fmt"
	"math"
	"slices"

	"pipeplan/core/schedule"
)

// Planners are the planner names a plan may carry.
var Planners = []string{"pipedream", "madpipe", "2bw", "ptdp", "manual"}

// RecomputeModes are the activation recomputation modes.
var RecomputeModes = []string{"none", "selective", "full"}

// Validate checks the plan's internal consistency and returns the first
// problem as an error naming the field and the bad value.
func (p *Plan) Validate() error {
	if p.Version != Version {
		return fmt.Errorf("version: unsupported schema version %d (this build reads %d)", p.Version, Version)
	}
	if !slices.Contains(Planners, p.Planner) {
		return fmt.Errorf("planner: must be one of %v, got %q", Planners, p.Planner)
	}
	if err := p.Model.validate(); err != nil {
		return err
	}
	if err := p.Cluster.validate(); err != nil {
		return err
	}
	if err := p.Parallelism.validate(); err != nil {
		return err
	}
	if err := p.validateStages(); err != nil {
		return err
	}
	if err := p.Schedule.validate(); err != nil {
		return err
	}
	if !slices.Contains(RecomputeModes, p.Recompute) {
		return fmt.Errorf("recompute: must be one of %v, got %q", RecomputeModes, p.Recompute)
	}
	return p.Predictions.validate()
}

func (m Model) validate() error {
	if m.NumLayers < 1 {
		return fmt.Errorf("model.num_layers: must be >= 1, got %d", m.NumLayers)
	}
	if m.Transformer == nil && m.Profile == nil {
		return fmt.Errorf("model: needs a transformer spec or a layer profile, got neither")
	}
	if m.Profile != nil && len(m.Profile.Layers) != m.NumLayers {
		return fmt.Errorf("model.num_layers: %d does not match model.profile.layers (%d layers)", m.NumLayers, len(m.Profile.Layers))
	}
	return nil
}

func (c Cluster) validate() error {
	if c.GPU == "" {
		return fmt.Errorf("cluster.gpu: must name a GPU profile id, got %q", c.GPU)
	}
	if c.Nodes < 1 {
		return fmt.Errorf("cluster.nodes: must be >= 1, got %d", c.Nodes)
	}
	if c.GPUsPerNode < 1 {
		return fmt.Errorf("cluster.gpus_per_node: must be >= 1, got %d", c.GPUsPerNode)
	}
	for i, l := range c.Levels {
		if l.Workers < 1 {
			return fmt.Errorf("cluster.levels[%d].workers: must be >= 1, got %d", i, l.Workers)
		}
		if !(l.BandwidthBytesPerSec > 0) || math.IsInf(l.BandwidthBytesPerSec, 0) {
			return fmt.Errorf("cluster.levels[%d].bandwidth_bytes_per_sec: must be a positive number, got %v", i, l.BandwidthBytesPerSec)
		}
	}
	return nil
}

func (d Parallelism) validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"tp", d.TP}, {"pp", d.PP}, {"dp", d.DP}, {"interleave", d.Interleave}} {
		if f.v < 1 {
			return fmt.Errorf("parallelism.%s: must be >= 1, got %d", f.name, f.v)
		}
	}
	return nil
}

// validateStages checks that the stages tile the layers in order and that
// the devices they need fit the cluster.
func (p *Plan) validateStages() error {
	want := p.Parallelism.PP * p.Parallelism.Interleave
	if len(p.Stages) != want {
		return fmt.Errorf("stages: want parallelism.pp × parallelism.interleave = %d stages, got %d", want, len(p.Stages))
	}
	next := 0
	devices := 0
	for i, s := range p.Stages {
		if s.FirstLayer != next {
			return fmt.Errorf("stages[%d].first_layer: must be %d (stages tile the layers in order), got %d", i, next, s.FirstLayer)
		}
		if s.LastLayer < s.FirstLayer || s.LastLayer >= p.Model.NumLayers {
			return fmt.Errorf("stages[%d].last_layer: must be in [%d, %d], got %d", i, s.FirstLayer, p.Model.NumLayers-1, s.LastLayer)
		}
		if s.Replicas < 1 {
			return fmt.Errorf("stages[%d].replicas: must be >= 1, got %d", i, s.Replicas)
		}
		next = s.LastLayer + 1
		if i < p.Parallelism.PP {
			devices += s.Replicas
		}
	}
	if next != p.Model.NumLayers {
		return fmt.Errorf("stages: cover layers 0..%d but the model has %d layers", next-1, p.Model.NumLayers)
	}
	devices *= p.Parallelism.TP * p.Parallelism.DP
	if gpus := p.Cluster.GPUs(); devices > gpus {
		return fmt.Errorf("stages: need %d GPUs (tp %d × dp %d × stage replicas) but cluster has %d", devices, p.Parallelism.TP, p.Parallelism.DP, gpus)
	}
	return nil
}

func (s Schedule) validate() error {
	if !slices.Contains(schedule.Kinds, schedule.Kind(s.Kind)) {
		return fmt.Errorf("schedule.kind: must be one of %v, got %q", schedule.Kinds, s.Kind)
	}
	if s.Microbatches < 1 {
		return fmt.Errorf("schedule.microbatches: must be >= 1, got %d", s.Microbatches)
	}
	if s.MicrobatchSize < 1 {
		return fmt.Errorf("schedule.microbatch_size: must be >= 1, got %d", s.MicrobatchSize)
	}
	if s.GlobalBatch < 1 {
		return fmt.Errorf("schedule.global_batch: must be >= 1, got %d", s.GlobalBatch)
	}
	return nil
}

func (pr Predictions) validate() error {
	fields := []struct {
		name string
		v    float64
	}{
		{"iteration_seconds", pr.IterationSeconds}, {"samples_per_second", pr.SamplesPerSecond},
		{"tokens_per_second", pr.TokensPerSecond}, {"tflops_per_gpu", pr.TFLOPSPerGPU},
		{"mfu", pr.MFU}, {"bubble_fraction", pr.BubbleFraction},
		{"bottleneck_seconds", pr.BottleneckSeconds}, {"peak_bytes_per_gpu", pr.PeakBytesPerGPU},
	}
	for _, f := range fields {
		if err := nonNegative("predictions."+f.name, f.v); err != nil {
			return err
		}
	}
	for i, b := range pr.StagePeakBytes {
		if err := nonNegative(fmt.Sprintf("predictions.stage_peak_bytes[%d]", i), b); err != nil {
			return err
		}
	}
	if pr.BubbleFraction > 1 {
		return fmt.Errorf("predictions.bubble_fraction: must be <= 1, got %v", pr.BubbleFraction)
	}
	return nil
}

func nonNegative(field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return fmt.Errorf("%s: must be a finite number >= 0, got %v", field, v)
	}
	return nil
}
