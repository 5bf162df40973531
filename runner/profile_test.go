package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipeplan/app"
	"pipeplan/cli"
	"pipeplan/core/cost"
	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// TestProfileEndToEnd profiles the tiny Llama-style plan on the CPU with
// real torch and reads the results back with the parsers that take them:
// the playground's upload (app.ParseUploadedProfile), `pipeplan partition
// --profile` itself, and cost.ParseCalibration with cost.Calibrate. The
// block's parameter bytes are core/model's parameter count × 4 (fp32), an
// independent count, and its output is b × s × h fp32 values.
func TestProfileEndToEnd(t *testing.T) {
	torchPython(t)
	t.Parallel() // a torch process of its own
	dir := t.TempDir()
	profPath, calPath := filepath.Join(dir, "profile.json"), filepath.Join(dir, "calibration.json")
	prof, stdout := profileUploaded(t, profPath, "--calibration", calPath, "--repeats", "2", "--warmup", "1",
		"--gemm-sizes", "16,32,64", "testdata/tiny-llama-tp2.json")
	p := loadPlan(t, "tiny-llama-tp2.json")
	tr := *p.Model.Transformer
	if len(prof.Layers) != tr.Layers+2 || prof.MicrobatchSize != p.Execution.MicrobatchSize || prof.Device != "" {
		t.Fatalf("profile: %d layers (want %d), microbatch %d (want %d), device %q (a CPU has no gpuprofiles id)",
			len(prof.Layers), tr.Layers+2, prof.MicrobatchSize, p.Execution.MicrobatchSize, prof.Device)
	}
	b := p.Execution.MicrobatchSize
	for i, l := range prof.Layers[1 : tr.Layers+1] {
		if l.ParameterBytes != 4*tr.LayerParams() || l.OutputActivationBytes != float64(4*b*tr.Seq*tr.Hidden) {
			t.Errorf("block %d: %v parameter bytes (core/model: 4 × %v), %v output bytes (want 4 × %d × %d × %d)",
				i, l.ParameterBytes, tr.LayerParams(), l.OutputActivationBytes, b, tr.Seq, tr.Hidden)
		}
		if !(l.FwdSeconds > 0) || !(l.BwdSeconds > 0) {
			t.Errorf("block %d: times %v, %v", i, l.FwdSeconds, l.BwdSeconds)
		}
	}
	if names := []string{prof.Layers[0].Name, prof.Layers[len(prof.Layers)-1].Name}; names[0] != "embedding" || names[1] != "head" {
		t.Errorf("chain ends %v, want embedding … head", names)
	}
	var out bytes.Buffer
	planPath := filepath.Join(dir, "plan.json")
	if err := cli.Run([]string{"partition", "--profile", profPath, "--level-sizes", "2", "--export-plan", planPath}, &out); err != nil {
		t.Fatalf("pipeplan partition --profile rejects the profile: %v\n%s", err, out.String())
	}
	planned, err := os.ReadFile(planPath)
	if err != nil {
		t.Fatal(err)
	}
	if pp, err := plan.Parse(planned); err != nil || pp.Model.Profile == nil || len(pp.Model.Profile.Layers) != tr.Layers+2 {
		t.Errorf("partition's plan of the profile: %v", err)
	}
	calData, err := os.ReadFile(calPath)
	if err != nil {
		t.Fatal(err)
	}
	cal, err := cost.ParseCalibration(calData)
	if err != nil {
		t.Fatal(err)
	}
	if cal.Precision != "fp32" || cal.Device != "cpu" || len(cal.Measurements) != 3*2 || cal.Measurements[0].FLOPs != 2*16*16*16 {
		t.Errorf("calibration %+v", cal)
	}
	if curve, err := cost.Calibrate(cal.Measurements, 1e12); err != nil || len(curve.Points) != 3 {
		t.Errorf("curve %+v, %v", curve, err)
	}
	if !strings.Contains(stdout.String(), "block3") || !strings.Contains(stdout.String(), "GEMM n (fp32)") {
		t.Errorf("summary:\n%s", stdout.String())
	}
}

// profileUploaded runs `runner profile --out out args...` and reads the
// profile back as the playground's upload does; it returns the profile
// and the summary printed.
func profileUploaded(t *testing.T, out string, args ...string) (model.Profile, *bytes.Buffer) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := runProfile(context.Background(), append([]string{"--out", out, "--timeout", hangTimeout}, args...), &stdout, &stderr); err != nil {
		t.Fatalf("profile: %v\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := app.ParseUploadedProfile("profile.json", data, 0)
	if err != nil {
		t.Fatalf("the playground's upload rejects the profile: %v\n%s", err, data)
	}
	return prof, &stdout
}

// TestProfileMoE profiles a tiny MoE model (testdata/moe-ep2.json: 3
// blocks, the first dense, then 4 experts of which 2 are routed to, plus a
// shared one) on the CPU with real torch: the profile parses as the
// playground's upload, and each block's parameter bytes are core/model's
// count for that block × 4 (fp32), an independent count that tells the
// dense block from the MoE ones.
func TestProfileMoE(t *testing.T) {
	torchPython(t)
	t.Parallel() // a torch process of its own
	prof, _ := profileUploaded(t, filepath.Join(t.TempDir(), "profile.json"), "--repeats", "1", "--warmup", "0", "testdata/moe-ep2.json")
	tr := *loadPlan(t, "moe-ep2.json").Model.Transformer
	if len(prof.Layers) != tr.Layers+2 || tr.MoELayers() != 2 {
		t.Fatalf("profile: %d layers, want %d; the plan has %d MoE blocks, want 2", len(prof.Layers), tr.Layers+2, tr.MoELayers())
	}
	for i, l := range prof.Layers[1 : tr.Layers+1] {
		if l.ParameterBytes != 4*tr.LayerParamsAt(i) {
			t.Errorf("block %d (MoE %v): %v parameter bytes, want 4 × %v (core/model)", i, tr.IsMoELayer(i), l.ParameterBytes, tr.LayerParamsAt(i))
		}
		if !(l.FwdSeconds > 0) || !(l.BwdSeconds > 0) {
			t.Errorf("block %d: times %v, %v", i, l.FwdSeconds, l.BwdSeconds)
		}
	}
	if dense, moe := prof.Layers[1].ParameterBytes, prof.Layers[2].ParameterBytes; !(moe > dense) {
		t.Errorf("MoE block holds %v parameter bytes, not more than the dense block's %v", moe, dense)
	}
}

// TestProfileFlags: bad flags are refused before torch starts.
func TestProfileFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", "x"}, "profile: give a plan file or --model, exactly one"},
		{[]string{"--out", "x", "--model", "llama3-8b", "p.json"}, "exactly one"},
		{[]string{"--model", "llama3-8b"}, "profile: give --out (layer profile) or --calibration"},
		{[]string{"--out", "x", "--model", "llama3-8b", "--layers", "300"}, "--layers: must be in [0, 256], got 300"},
		{[]string{"--out", "x", "--model", "llama3-8b", "--gemm-sizes", "64,32"}, `--gemm-sizes: want increasing sizes in [1, 32768], got "32"`},
		{[]string{"--out", "x", "--model", "llama3-8b", "--gemm-sizes", "99999"}, `got "99999"`},
		{[]string{"--out", "x", "--model", "llama3-8b", "--device", "tpu"}, `--device: must be cpu or cuda, got "tpu"`},
		{[]string{"--out", "x", "--model", "llama3-8b", "--gpu", "nvidia-nope"}, "--gpu:"},
		{[]string{"--out", "x", "--model", "llama3-8b", "--repeats", "0"}, "--repeats: must be in [1, 100], got 0"},
		{[]string{"--out", "x", "--model", "gpt-99"}, `--model: preset "gpt-99": not an LLM preset`},
		{[]string{"--out", "x", "testdata/tiny-profile.json"}, "model.transformer: the plan's model is a layer profile"},
	} {
		err := runProfile(context.Background(), tc.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestParseProfileOutput: the script's result must hold every layer and
// every GEMM repeat at the sizes asked for.
func TestParseProfileOutput(t *testing.T) {
	cfg := profileConfig{Model: &workerModel{Layers: 1}, Repeats: 1, GEMMSizes: []int{8}}
	good := profileOutput{Layers: make([]model.Layer, 3), GEMMs: []gemmTiming{{N: 8, FLOPs: 1024, Seconds: 1e-6}}}
	enc := func(o profileOutput) []byte { b, _ := json.Marshal(o); return b }
	if _, err := parseProfileOutput(enc(good), cfg); err != nil {
		t.Fatal(err)
	}
	short := good
	short.Layers = good.Layers[:2]
	wrongN := good
	wrongN.GEMMs = []gemmTiming{{N: 8, FLOPs: 1000, Seconds: 1}}
	for _, tc := range []struct {
		data []byte
		want string
	}{
		{enc(short), "profile result.layers: want 3 (embedding, 1 blocks, head), got 2"},
		{enc(wrongN), "profile result.gemms[0]: want n 8 with 1024 FLOPs, got n 8 with 1000"},
		{[]byte(`{"layers": [], "extra": 1}`), `unknown field "extra"`},
	} {
		if _, err := parseProfileOutput(tc.data, cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

// FuzzParseProfileOutput: the profile script's output is outside input;
// an accepted one has every layer and every GEMM at its size.
func FuzzParseProfileOutput(f *testing.F) {
	f.Add([]byte(`{"torch_version":"1.13","device_name":"cpu","dtype":"float32","layers":[{"fwd_seconds":1,"bwd_seconds":1,"output_activation_bytes":4,"parameter_bytes":4},{},{}],"gemms":[{"n":8,"flops":1024,"seconds":1e-6}]}`))
	f.Add([]byte(`{"layers":[{},{},{}],"gemms":[{"n":8,"flops":1024,"seconds":-1}]}`))
	f.Add([]byte(`{"layers":null,"gemms":null}`))
	cfg := profileConfig{Model: &workerModel{Layers: 1}, Repeats: 1, GEMMSizes: []int{8}}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := parseProfileOutput(data, cfg)
		if err != nil {
			return
		}
		if len(out.Layers) != 3 || len(out.GEMMs) != 1 || out.GEMMs[0].FLOPs != 1024 {
			t.Fatalf("accepted %+v", out)
		}
		// profileFiles then checks the numbers with the profile's and the
		// calibration's own rules.
		_, _, _ = profileFiles(out, cfg, "", "fuzz")
	})
}
