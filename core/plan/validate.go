package plan

import (
	"fmt"
	"math"
	"slices"
)

// The planner names a plan may carry: core/partition's registry holds a
// planner under each name but PlannerManual (a plan written by hand).
const (
	PlannerPipeDream = "pipedream"
	PlannerMadPipe   = "madpipe"
	PlannerTwoBW     = "2bw"
	PlannerPTDP      = "ptdp"
	PlannerManual    = "manual"
)

// Planners are the planner names a plan may carry.
var Planners = []string{PlannerPipeDream, PlannerMadPipe, PlannerTwoBW, PlannerPTDP, PlannerManual}

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
	if err := p.Execution.Validate(); err != nil {
		return err
	}
	if err := p.validateStages(); err != nil {
		return err
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

// chunksOf names where an execution's chunks per device come from: the
// interleave, or the schedule's own.
func chunksOf(e Execution) string {
	if e.Chunks() != e.Interleave {
		return fmt.Sprintf("the chunks per device of %s", e.Schedule)
	}
	return "execution.interleave"
}

// validateStages checks that the stages tile the layers in order and that
// the devices they need match the cluster: exactly its GPUs (t·p·d·cp) when
// no stage is replicated, at most its GPUs with PipeDream's replicated
// stages.
func (p *Plan) validateStages() error {
	e := p.Execution
	want := e.PP * e.Chunks()
	if len(p.Stages) != want {
		return fmt.Errorf("stages: want execution.pp × %s = %d·%d = %d stages, got %d", chunksOf(e), e.PP, e.Chunks(), want, len(p.Stages))
	}
	next, replicated := 0, false
	devices := 0.0 // replicas of the first pp stages: as float64, no overflow
	for i, s := range p.Stages {
		if s.FirstLayer != next {
			return fmt.Errorf("stages[%d].first_layer: must be %d (stages tile the layers in order), got %d", i, next, s.FirstLayer)
		}
		lowest := s.FirstLayer
		if i == 0 || i == len(p.Stages)-1 {
			lowest-- // an end stage may hold no layers (EmptyStage)
		}
		if s.LastLayer < lowest || s.LastLayer >= p.Model.NumLayers {
			return fmt.Errorf("stages[%d].last_layer: must be in [%d, %d], got %d", i, lowest, p.Model.NumLayers-1, s.LastLayer)
		}
		if s.Replicas < 1 {
			return fmt.Errorf("stages[%d].replicas: must be >= 1, got %d", i, s.Replicas)
		}
		next = s.LastLayer + 1
		if i < e.PP {
			devices += float64(s.Replicas)
		}
		replicated = replicated || s.Replicas > 1
	}
	if next != p.Model.NumLayers {
		return fmt.Errorf("stages: cover layers 0..%d but the model has %d layers", next-1, p.Model.NumLayers)
	}
	gpus := p.Cluster.GPUs()
	if !replicated && e.GPUs() != gpus { // Validate bounded the degrees: no overflow
		return fmt.Errorf("execution: tp·pp·dp·cp = %d·%d·%d·%d = %d GPUs, but the cluster has %d", e.TP, e.PP, e.DP, e.CP, e.GPUs(), gpus)
	}
	if need := float64(e.TP*e.DP*e.CP) * devices; need > float64(gpus) {
		return fmt.Errorf("stages: need %.0f GPUs (tp %d × dp %d × cp %d × %.0f stage replicas) but the cluster has %d", need, e.TP, e.DP, e.CP, devices, gpus)
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
