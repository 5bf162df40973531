package main

import (
	"fmt"
	"slices"
	"strings"

	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// supportedKinds are the schedule kinds the worker executes: synchronous
// schedules with a flush, whose action lists hold only F, B and OPT_STEP.
var supportedKinds = []schedule.Kind{schedule.GPipe, schedule.OneFOneB}

// rankInfo is what one torchrun rank runs: a stage's layers on one replica.
type rankInfo struct {
	Rank       int `json:"rank"`
	Stage      int `json:"stage"`
	Replica    int `json:"replica"`
	FirstLayer int `json:"first_layer"`
	LastLayer  int `json:"last_layer"`
}

// workerModel is the model the worker builds (see worker.py make_layer).
type workerModel struct {
	// Kind is "transformer" (torch TransformerEncoderLayer blocks) or
	// "profile" (synthetic Linear bottleneck layers).
	Kind   string `json:"kind"`
	Layers int    `json:"layers"`
	Seed   int    `json:"seed"`
	Hidden int    `json:"hidden,omitempty"`
	Heads  int    `json:"heads,omitempty"`
	Seq    int    `json:"seq,omitempty"`
	FFN    int    `json:"ffn,omitempty"`
	// Width is the activation width of a profile model's layers.
	Width int `json:"width,omitempty"`
	// Bottleneck is each profile layer's inner width, chosen so that the
	// layer's fp32 parameters match its profiled parameter bytes.
	Bottleneck []int `json:"bottleneck,omitempty"`
}

// runConfig is run.json, the worker's whole input.
type runConfig struct {
	Device  string `json:"device"`
	Backend string `json:"backend"`
	// Schedule is the schedule kind run: the plan's, or --schedule's.
	Schedule       string      `json:"schedule"`
	Model          workerModel `json:"model"`
	Stages         int         `json:"stages"`
	Replicas       int         `json:"replicas"`
	Microbatches   int         `json:"microbatches"`
	MicrobatchSize int         `json:"microbatch_size"`
	Steps          int         `json:"steps"`
	Warmup         int         `json:"warmup"`
	LR             float64     `json:"lr"`
	Ranks          []rankInfo  `json:"ranks"`
	// Actions is each stage's action list for one step, in compact form ("0F1").
	Actions [][]string `json:"actions"`
	OutDir  string     `json:"out_dir"`
	// ScaledDown records that --scale-down shrank the plan.
	ScaledDown bool `json:"scaled_down"`
	// Comparable is whether the run is the plan as predicted: full size, the plan's schedule.
	Comparable bool `json:"comparable"`
	// schedule is the generated schedule the actions come from.
	schedule *schedule.Schedule
}

// Scale-down limits: small enough that a 2-core CPU runs a step in well under a second.
const (
	scaleLayersPerStage = 2
	scaleHidden         = 64
	scaleHeads          = 4
	scaleSeq            = 16
	scaleMicrobatches   = 8
	scaleMicrobatchSize = 2
	scaleProfileWidth   = 64
	scaleLayerBytes     = 1 << 20
	profileWidth        = 256
	maxLayerBytes       = 1 << 40
	fp32Bytes           = 4
)

// newRunConfig maps a plan onto ranks (rank = replica·stages + stage) and
// the worker's model; with o.scaleDown it keeps the stages but runs one
// replica of each with fewer layers and smaller dimensions.
func newRunConfig(p *plan.Plan, o options) (*runConfig, error) {
	kind := p.Execution.Schedule
	if o.schedule != "" {
		kind = schedule.Kind(o.schedule)
	}
	if !supported(kind) {
		where := "execution.schedule"
		if o.schedule != "" {
			where = "--schedule"
		}
		return nil, fmt.Errorf("%s: %q is not supported by the runner yet (supported: %s; --schedule runs the plan's stages with one of them)", where, kind, supportedList())
	}
	scaleDown := o.scaleDown
	replicas, err := replicaWidth(p, scaleDown)
	if err != nil {
		return nil, err
	}
	stages := len(p.Stages)
	c := &runConfig{
		Device: o.device, Backend: "gloo", Schedule: string(kind), Stages: stages, Replicas: replicas,
		Microbatches: p.Execution.Microbatches(), MicrobatchSize: p.Execution.MicrobatchSize,
		Steps: o.steps, Warmup: o.warmup, LR: 0.05, ScaledDown: scaleDown,
		Comparable: !scaleDown && kind == p.Execution.Schedule,
	}
	if o.device == "cuda" {
		c.Backend = "nccl"
	}
	ranges := make([][2]int, stages)
	for s, st := range p.Stages {
		ranges[s] = [2]int{st.FirstLayer, st.LastLayer}
	}
	if scaleDown {
		c.Microbatches = min(c.Microbatches, scaleMicrobatches)
		c.MicrobatchSize = min(c.MicrobatchSize, scaleMicrobatchSize)
		ranges = shrinkStages(ranges, scaleLayersPerStage)
	}
	if c.Model, err = newWorkerModel(p, ranges, scaleDown); err != nil {
		return nil, err
	}
	for r := range replicas {
		for s, lr := range ranges {
			c.Ranks = append(c.Ranks, rankInfo{Rank: r*stages + s, Stage: s, Replica: r, FirstLayer: lr[0], LastLayer: lr[1]})
		}
	}
	sched, err := schedule.Generate(kind, schedule.Options{Stages: stages, Microbatches: c.Microbatches})
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	c.schedule = sched
	for _, list := range sched.Devices {
		acts := make([]string, len(list))
		for i, a := range list {
			acts[i] = a.String()
		}
		c.Actions = append(c.Actions, acts)
	}
	return c, nil
}

// supported reports whether the worker executes kind k.
func supported(k schedule.Kind) bool { return slices.Contains(supportedKinds, k) }

// supportedList names the kinds the worker executes, e.g. "gpipe or 1f1b".
func supportedList() string {
	names := make([]string, len(supportedKinds))
	for i, k := range supportedKinds {
		names[i] = string(k)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// replicaWidth is the number of parallel pipelines the runner starts: the
// plan's dp times its (equal) stage replicas, or 1 when scaling down.
func replicaWidth(p *plan.Plan, scaleDown bool) (int, error) {
	if scaleDown {
		return 1, nil
	}
	for _, d := range []struct {
		field, what string
		v           int
	}{{"tp", "tensor", p.Execution.TP}, {"cp", "context", p.Execution.CP}, {"ep", "expert", p.Execution.EP}} {
		if d.v > 1 {
			return 0, fmt.Errorf("execution.%s: %s parallelism (%d) is not supported by the runner yet; use --scale-down for a functional run with %s 1", d.field, d.what, d.v, d.field)
		}
	}
	r := p.Stages[0].Replicas
	for i, s := range p.Stages {
		if s.Replicas != r {
			return 0, fmt.Errorf("stages[%d].replicas: the runner needs equal replicas on every stage (stage 0 has %d, got %d); unequal replication (1f1b-rr) is not supported by the runner yet; use --scale-down", i, r, s.Replicas)
		}
	}
	return r * p.Execution.DP, nil
}

// shrinkStages keeps the number of stages and gives each at most perStage
// layers, renumbered contiguously from 0.
func shrinkStages(ranges [][2]int, perStage int) [][2]int {
	out := make([][2]int, len(ranges))
	next := 0
	for s, r := range ranges {
		n := min(r[1]-r[0]+1, perStage)
		out[s] = [2]int{next, next + n - 1}
		next += n
	}
	return out
}

// newWorkerModel describes the model to build: the plan's transformer
// dimensions, or Linear layers matching the profile's parameter bytes.
func newWorkerModel(p *plan.Plan, ranges [][2]int, scaleDown bool) (workerModel, error) {
	m := workerModel{Layers: ranges[len(ranges)-1][1] + 1, Seed: 1}
	if t := p.Model.Transformer; t != nil {
		m.Kind, m.Hidden, m.Heads, m.Seq, m.FFN = "transformer", t.Hidden, t.Heads, t.Seq, t.FFN
		if m.FFN == 0 {
			m.FFN = 4 * m.Hidden
		}
		if scaleDown {
			m.Heads = max(1, min(m.Heads, scaleHeads))
			m.Hidden = max(m.Heads, min(m.Hidden, scaleHidden)/m.Heads*m.Heads)
			m.Seq = max(1, min(m.Seq, scaleSeq))
			m.FFN = max(1, min(m.FFN, 4*m.Hidden))
		}
		switch {
		case m.Hidden < 1 || m.Heads < 1 || m.Hidden%m.Heads != 0:
			return m, fmt.Errorf("model.transformer: hidden (%d) must be a positive multiple of heads (%d)", m.Hidden, m.Heads)
		case m.Seq < 1:
			return m, fmt.Errorf("model.transformer.seq: must be >= 1, got %d", m.Seq)
		}
		return m, nil
	}
	m.Kind, m.Width = "profile", profileWidth
	if scaleDown {
		m.Width = scaleProfileWidth
	}
	// Map each run layer to a plan layer: the stage's first layers when shrunk.
	for s, r := range ranges {
		for i := range r[1] - r[0] + 1 {
			j := p.Stages[s].FirstLayer + i
			bytes := p.Model.Profile.Layers[j].ParameterBytes
			if !(bytes >= 0 && bytes <= maxLayerBytes) {
				return m, fmt.Errorf("model.profile.layers[%d].parameter_bytes: must be in [0, %g], got %v", j, float64(maxLayerBytes), bytes)
			}
			if scaleDown {
				bytes = min(bytes, scaleLayerBytes)
			}
			// Two Linear(width, k) layers hold 2·width·k weights (biases aside).
			m.Bottleneck = append(m.Bottleneck, max(1, int(bytes/(2*fp32Bytes*float64(m.Width)))))
		}
	}
	return m, nil
}
