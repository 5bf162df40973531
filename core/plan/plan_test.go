package plan

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/schedule"
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
		Execution: Execution{TP: 8, PP: 12, DP: 2, Interleave: 1, CP: 1, EP: 1, MicrobatchSize: 1, GlobalBatch: 1536,
			Recompute: model.RecomputeFull, Schedule: schedule.OneFOneB, ScatterGather: true},
		Stages:      stages,
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
		{"tp", func(p *Plan) { p.Execution.TP = 0 }, "execution.tp: must be at least 1, got 0"},
		{"cp", func(p *Plan) { p.Execution.CP = 0 }, "execution.cp: must be at least 1, got 0"},
		{"huge", func(p *Plan) { p.Execution.DP = 1 << 40 }, "execution.dp: must be at most 32768, got 1099511627776"},
		{"stage count", func(p *Plan) { p.Execution.PP = 4 }, "stages: want execution.pp × execution.interleave = 4·1 = 4 stages, got 12"},
		{"gap", func(p *Plan) { p.Stages[3].FirstLayer = 25 }, "stages[3].first_layer: must be 24"},
		{"last layer", func(p *Plan) { p.Stages[11].LastLayer = 96 }, "stages[11].last_layer: must be in [87, 95], got 96"},
		{"empty middle stage", func(p *Plan) { p.Stages[5].LastLayer = 39 }, "stages[5].last_layer: must be in [40, 95], got 39"},
		{"uncovered", func(p *Plan) { p.Stages[11].LastLayer = 90 }, "stages: cover layers 0..90 but the model has 96 layers"},
		{"replicas", func(p *Plan) { p.Stages[2].Replicas = 0 }, "stages[2].replicas: must be >= 1, got 0"},
		{"gpus", func(p *Plan) { p.Execution.DP = 3 }, "execution: tp·pp·dp·cp = 8·12·3·1 = 288 GPUs, but the cluster has 192"},
		{"fewer gpus", func(p *Plan) { p.Execution.DP = 1 }, "execution: tp·pp·dp·cp = 8·12·1·1 = 96 GPUs, but the cluster has 192"},
		{"replicated too many", func(p *Plan) { p.Stages[0].Replicas = 2; p.Execution.DP = 2 }, "stages: need 208 GPUs (tp 8 × dp 2 × cp 1 × 13 stage replicas) but the cluster has 192"},
		{"kind", func(p *Plan) { p.Execution.Schedule = "2f2b" }, `execution.schedule: must be one of gpipe, 1f1b,`},
		{"batch split", func(p *Plan) { p.Execution.GlobalBatch = 1535 }, "execution.global_batch: 1535 samples do not split into microbatches of dp 2 × microbatch_size 1 = 2 samples"},
		{"dualpipe-v batch", func(p *Plan) { p.Execution.Schedule, p.Execution.GlobalBatch = "dualpipe-v", 40 }, "execution.global_batch: dualpipe-v needs at least 24 microbatches a step (2 per pipeline device × pp 12), got 20 (global batch 40 over dp 2 × microbatch 1)"},
		{"recompute", func(p *Plan) { p.Execution.Recompute = "some" }, `execution.recompute: must be one of none, selective, full; got "some"`},
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
	p.Execution.PP, p.Execution.DP = 6, 4
	p.Execution.Interleave, p.Execution.Schedule = 2, schedule.Interleaved
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
	for _, c := range []string{CPCommAllGather, "ring"} { // a context-parallel communication type, and a bad one
		q := examplePlan()
		q.Execution.CPComm = c
		if data, err := json.Marshal(q); err == nil {
			f.Add(data)
		}
	}
	// A ZB-V and a DualPipeV plan: pp 6 with two chunks a device in a V,
	// the 12 stages as they are.
	for _, k := range []schedule.Kind{schedule.ZBV, schedule.DualPipeV} {
		v := examplePlan()
		v.Execution.PP, v.Execution.DP, v.Execution.TP, v.Execution.Schedule = 6, 4, 8, k
		if err := v.Validate(); err != nil {
			f.Fatalf("%s seed: %v", k, err)
		}
		if data, err := json.Marshal(v); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"version":1,"stages":[{"first_layer":-1}]}`))
	for _, name := range []string{"v1-replicated.json", "v1-pipedream.json"} {
		v1, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(v1)
	}
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

// Version-1 plans are read and converted: parallelism, schedule and
// recompute become the execution; equal stage replicas fold into dp when
// that makes the stored microbatch count B/(d·b); PipeDream's NOAM count
// fixes its batch; anything else inconsistent is refused.
func TestParseV1(t *testing.T) {
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	rep, err := Parse(read("v1-replicated.json")) // pp 2, dp 1, 2 replicas per stage; m 4, b 2, B 16
	if err != nil {
		t.Fatal(err)
	}
	e := rep.Execution
	if rep.Version != Version || e.TP != 1 || e.PP != 2 || e.DP != 2 || e.CP != 1 || e.EP != 1 || e.Microbatches() != 4 ||
		e.MicrobatchSize != 2 || e.GlobalBatch != 16 || e.Schedule != schedule.OneFOneB || e.Recompute != model.RecomputeNone {
		t.Errorf("converted execution %+v", e)
	}
	for i, s := range rep.Stages {
		if s.Replicas != 1 {
			t.Errorf("stage %d: %d replicas, want them folded into dp", i, s.Replicas)
		}
	}
	pd, err := Parse(read("v1-pipedream.json")) // m 4, b 2, B 8 = 4·2: consistent as is
	if err != nil {
		t.Fatal(err)
	}
	if e := pd.Execution; e.Microbatches() != 4 || e.GlobalBatch != 8 || e.Schedule != schedule.GPipe {
		t.Errorf("converted execution %+v", e)
	}
	// The converted plans write as version 2 and read back unchanged.
	for _, p := range []*Plan{rep, pd} {
		out, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), `"version": 2`) || !strings.Contains(string(out), `"execution"`) || strings.Contains(string(out), `"parallelism"`) {
			t.Errorf("written plan is not version 2:\n%s", out)
		}
		again, err := Parse(out)
		if err != nil || again.Execution != p.Execution {
			t.Errorf("re-read: %v, %+v vs %+v", err, again, p.Execution)
		}
	}
	noam := strings.Replace(string(read("v1-pipedream.json")), `"microbatches": 4`, `"microbatches": 3`, 1)
	if !strings.Contains(noam, `"microbatches": 3`) {
		t.Fatal("testdata changed: no microbatches field to edit")
	}
	if p, err := Parse([]byte(noam)); err != nil || p.Execution.Microbatches() != 3 || p.Execution.GlobalBatch != 6 {
		t.Errorf("PipeDream with NOAM 3: %v, %+v", err, p)
	}
	bad := strings.Replace(strings.Replace(noam, `"planner": "pipedream"`, `"planner": "manual"`, 1), `"gpipe"`, `"1f1b"`, 1)
	if _, err := Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), "schedule.microbatches: version-1 plan stores 3 microbatches, but global_batch 8 / (dp 1 × microbatch_size 2) gives 4") {
		t.Errorf("inconsistent v1 plan: error %v", err)
	}
	typo := strings.Replace(string(read("v1-replicated.json")), `"recompute"`, `"recompte"`, 1)
	if _, err := Parse([]byte(typo)); err == nil || !strings.Contains(err.Error(), "recompte") {
		t.Errorf("v1 typo: error %v", err)
	}
}
