package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"gopkg.in/yaml.v3"

	"pipeplan/core/launch"
	"pipeplan/core/plan"
)

// TestRunExportCLI runs the subcommand on the runner's testdata plan.
func TestRunExportCLI(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := runExport([]string{"--format", "deepspeed", filepath.Join("testdata", "tiny-transformer.json")}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Train int `json:"train_batch_size"`
		Micro int `json:"train_micro_batch_size_per_gpu"`
		Accum int `json:"gradient_accumulation_steps"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &cfg); err != nil || cfg.Train != 16 || cfg.Micro != 2 || cfg.Accum != 4 {
		t.Errorf("tiny plan (2 replicas per stage = dp 2, 4 microbatches of 2): %+v, %v", cfg, err)
	}
	err := runExport([]string{"--format", "megatron", filepath.Join("testdata", "tiny-profile.json")}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "model.transformer = absent") {
		t.Errorf("profile plan in Megatron: %v", err)
	}
	// A cluster larger than the plan's GPUs, which plan.Validate lets a
	// plan with replicated stages leave idle: checkConsistency refuses it
	// before any exporter runs.
	p := loadPlan(t, "gpt-tp2-pp4-dp2.json")
	p.Execution.DP = 1
	for i := range p.Stages {
		p.Stages[i].Replicas = 2
	}
	p.Cluster.Nodes = 4
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(t.TempDir(), "big-cluster.json")
	if err := os.WriteFile(big, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range launch.Formats {
		err := runExport([]string{"--format", format, big}, &stdout, &stderr)
		if want := "cluster: 4 nodes × 8 GPUs = 32, but the plan uses tp 2 × dp 1 × 8 stage replicas × cp 1 = 16 GPUs"; err == nil || err.Error() != want {
			t.Errorf("%s on 32 GPUs: got %v, want %s", format, err, want)
		}
	}
}

// FuzzExport: whatever plan parses, every export either refuses with an
// error or prints an artifact that parses back.
func FuzzExport(f *testing.F) {
	for _, name := range []string{"tiny-transformer.json", "tiny-profile.json", "gpt-tp2-pp4-dp2.json", "tiny-interleaved.json", "tiny-end-chunks.json", "llama4-ep2.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	seed, err := os.ReadFile(filepath.Join("testdata", "gpt-tp2-pp4-dp2.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(bytes.Replace(seed, []byte(`"GPT 1.3B"`), []byte(`"a \"quoted\"\n\u0000 name: [x]"`), 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := plan.Parse(data)
		if err != nil || checkConsistency(p) != nil {
			return
		}
		for _, format := range launch.Formats {
			out, err := launch.Artifact(format, p, "")
			if err != nil {
				continue
			}
			switch format {
			case "torchtitan":
				var v map[string]any
				if _, err := toml.Decode(out, &v); err != nil {
					t.Fatalf("torchtitan TOML does not parse: %v\n%s", err, out)
				}
			case "deepspeed":
				if !json.Valid([]byte(out)) {
					t.Fatalf("deepspeed JSON does not parse:\n%s", out)
				}
			case "k8s":
				var v map[string]any
				if err := yaml.Unmarshal([]byte(out), &v); err != nil {
					t.Fatalf("k8s YAML does not parse: %v\n%s", err, out)
				}
				if v["kind"] != "PyTorchJob" {
					t.Fatalf("k8s YAML lost its kind: %v", v["kind"])
				}
			}
			for _, line := range strings.Split(out, "\n")[1:] {
				if strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "#SBATCH") && !strings.HasPrefix(line, "# ") {
					t.Fatalf("%s: a comment line broke: %q", format, line)
				}
			}
		}
	})
}

func TestCheckConsistency(t *testing.T) {
	for _, c := range []struct {
		edit func(*plan.Plan)
		want string
	}{
		{func(p *plan.Plan) { p.Cluster.Nodes = 4 }, "cluster: 4 nodes × 8 GPUs = 32, but the plan uses tp 2 × dp 2 × 4 stage replicas × cp 1 = 16 GPUs"},
		{func(p *plan.Plan) {
			p.Cluster.Nodes = 4
			for i := range p.Stages {
				p.Stages[i].Replicas = 2
			}
		}, "execution.global_batch: 32 microbatches × microbatch size 1 × data parallel 4 = 128 samples, got 64"},
		{func(p *plan.Plan) { p.Model.Transformer.Layers = 30 }, "model.num_layers: 24, but model.transformer.layers is 30"},
	} {
		p := loadPlan(t, "gpt-tp2-pp4-dp2.json")
		c.edit(p)
		if err := checkConsistency(p); err == nil || err.Error() != c.want {
			t.Errorf("got %v, want %s", err, c.want)
		}
	}
	if err := checkConsistency(loadPlan(t, "tiny-interleaved.json")); err != nil {
		t.Errorf("consistent plan refused: %v", err)
	}
}
