package plan

import (
	"math"
	"strings"
	"testing"

	"pipeplan/core/hw"
	"pipeplan/core/model"
)

// examplePlan is a PTD-P style plan of GPT-3 175B: t=8, p=12, d=2 on 24 DGX nodes.
func examplePlan() *Plan {
	stages := make([]Stage, 12)
	for i := range stages {
		stages[i] = Stage{FirstLayer: 8 * i, LastLayer: 8*i + 7, Replicas: 1}
	}
	return &Plan{
		Version: Version,
		Planner: "ptdp",
		Model: Model{
			Name:      "GPT-3 175B",
			NumLayers: 96,
			Transformer: &model.Transformer{
				Layers: 96, Hidden: 12288, Heads: 96, Seq: 2048, Vocab: 51200,
			},
		},
		Cluster: Cluster{
			GPU: "nvidia-a100-sxm4-80gb", Nodes: 24, GPUsPerNode: 8,
			Levels: []hw.Level{{Workers: 8, BandwidthBytesPerSec: 300e9}, {Workers: 24, BandwidthBytesPerSec: 25e9}},
		},
		Parallelism: Parallelism{TP: 8, PP: 12, DP: 2, Interleave: 1},
		Stages:      stages,
		Schedule:    Schedule{Kind: "1f1b", Microbatches: 768, MicrobatchSize: 1, GlobalBatch: 1536},
		Recompute:   "full",
		Predictions: Predictions{IterationSeconds: 40, SamplesPerSecond: 38.4, BubbleFraction: 0.014, PeakBytesPerGPU: 60e9},
	}
}

func TestMarshalParseRoundTrip(t *testing.T) {
	p := examplePlan()
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	again, err := got.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(data) {
		t.Errorf("round trip changed the plan:\n%s\nvs\n%s", data, again)
	}
}

func TestValidateNamesFieldAndValue(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(p *Plan)
		want   string
	}{
		{"version", func(p *Plan) { p.Version = 7 }, "version: unsupported schema version 7"},
		{"planner", func(p *Plan) { p.Planner = "magic" }, `planner: must be one of`},
		{"layers", func(p *Plan) { p.Model.NumLayers = 0 }, "model.num_layers: must be >= 1, got 0"},
		{"no model", func(p *Plan) { p.Model.Transformer = nil }, "model: needs a transformer spec or a layer profile"},
		{"profile mismatch", func(p *Plan) { p.Model.Profile = &model.Profile{Layers: make([]model.Layer, 3)} }, "does not match model.profile.layers (3 layers)"},
		{"gpu", func(p *Plan) { p.Cluster.GPU = "" }, "cluster.gpu"},
		{"nodes", func(p *Plan) { p.Cluster.Nodes = 0 }, "cluster.nodes: must be >= 1, got 0"},
		{"gpus per node", func(p *Plan) { p.Cluster.GPUsPerNode = -2 }, "cluster.gpus_per_node: must be >= 1, got -2"},
		{"level bandwidth", func(p *Plan) { p.Cluster.Levels[1].BandwidthBytesPerSec = math.NaN() }, "cluster.levels[1].bandwidth_bytes_per_sec: must be a positive number, got NaN"},
		{"level workers", func(p *Plan) { p.Cluster.Levels[0].Workers = 0 }, "cluster.levels[0].workers: must be >= 1, got 0"},
		{"tp", func(p *Plan) { p.Parallelism.TP = 0 }, "parallelism.tp: must be >= 1, got 0"},
		{"stage count", func(p *Plan) { p.Parallelism.PP = 4 }, "stages: want parallelism.pp × parallelism.interleave = 4 stages, got 12"},
		{"gap", func(p *Plan) { p.Stages[3].FirstLayer = 25 }, "stages[3].first_layer: must be 24"},
		{"last layer", func(p *Plan) { p.Stages[11].LastLayer = 96 }, "stages[11].last_layer: must be in [88, 95], got 96"},
		{"uncovered", func(p *Plan) { p.Stages[11].LastLayer = 90 }, "stages: cover layers 0..90 but the model has 96 layers"},
		{"replicas", func(p *Plan) { p.Stages[2].Replicas = 0 }, "stages[2].replicas: must be >= 1, got 0"},
		{"too many gpus", func(p *Plan) { p.Parallelism.DP = 3 }, "stages: need 288 GPUs (tp 8 × dp 3 × stage replicas) but cluster has 192"},
		{"kind", func(p *Plan) { p.Schedule.Kind = "2f2b" }, `schedule.kind: must be one of`},
		{"microbatches", func(p *Plan) { p.Schedule.Microbatches = 0 }, "schedule.microbatches: must be >= 1, got 0"},
		{"recompute", func(p *Plan) { p.Recompute = "some" }, `recompute: must be one of [none selective full], got "some"`},
		{"nan prediction", func(p *Plan) { p.Predictions.MFU = math.NaN() }, "predictions.mfu: must be a finite number >= 0, got NaN"},
		{"bubble", func(p *Plan) { p.Predictions.BubbleFraction = 1.5 }, "predictions.bubble_fraction: must be <= 1, got 1.5"},
		{"stage bytes", func(p *Plan) { p.Predictions.StagePeakBytes = []float64{1, -1} }, "predictions.stage_peak_bytes[1]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := examplePlan()
			c.mutate(p)
			err := p.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, c.want)
			}
			if _, err := p.Marshal(); err == nil {
				t.Fatal("Marshal accepted an invalid plan")
			}
		})
	}
}

func TestParseRejectsUnknownFieldsAndTrailingData(t *testing.T) {
	data, err := examplePlan().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	typo := strings.Replace(string(data), `"planner"`, `"planer"`, 1)
	if _, err := Parse([]byte(typo)); err == nil || !strings.Contains(err.Error(), "planer") {
		t.Errorf("Parse(typo) = %v, want an error naming the unknown field", err)
	}
	if _, err := Parse(append(data, []byte(`{}`)...)); err == nil || !strings.Contains(err.Error(), "trailing") {
		t.Errorf("Parse(trailing) = %v, want a trailing-data error", err)
	}
	if _, err := Parse(data[:len(data)/2]); err == nil {
		t.Error("Parse accepted a truncated plan")
	}
}

func TestInterleavedStagesCountDevicesOnce(t *testing.T) {
	p := examplePlan()
	p.Parallelism.PP = 6
	p.Parallelism.Interleave = 2
	if err := p.Validate(); err != nil {
		t.Fatalf("12 chunks on 6 stages × 2 interleave should be valid: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	data, err := examplePlan().Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"version":1,"stages":[{"first_layer":-1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			return
		}
		// Whatever parses must validate and survive a round trip.
		out, err := p.Marshal()
		if err != nil {
			t.Fatalf("parsed plan does not marshal: %v", err)
		}
		if _, err := Parse(out); err != nil {
			t.Fatalf("re-parse failed: %v", err)
		}
	})
}
