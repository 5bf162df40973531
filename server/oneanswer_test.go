package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"

	"pipeplan/cli"
	"pipeplan/server"
)

// oneAnswerCase is one input given to the CLI, the HTTP API and the page's
// JS API in each one's own form.
type oneAnswerCase struct {
	name string
	// cli is the CLI's arguments (without --json).
	cli []string
	// path and body are the API request.
	path, body string
	// js is a JavaScript expression calling window.pipeplan.
	js string
}

// TestOneAnswer gives the same inputs to the CLI (cli.Run with --json), the
// server's API (POST /api/v1/..., httptest) and the page's JS API
// (pipeplan.plan / pipeplan.allocate in headless Chromium), and requires the
// same JSON from all three after decoding: the same fields, floats bit for
// bit.
func TestOneAnswer(t *testing.T) {
	paper := "../core/gavel/testdata/instances/paper_example_3job.json"
	sim64 := "../core/gavel/testdata/instances/sim_k80-36_p100-36_v100-36_N64_seed0.json"
	pairs64 := strings.TrimSuffix(sim64, ".json") + ".pairs.json"
	read := func(path string) string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	jsString := func(s string) string {
		lit, _ := json.Marshal(s)
		return string(lit)
	}
	gpt3 := `{"model": "custom", "custom": {"layers": 96, "hidden": 12288, "heads": 96}, "nodes": 128, "gpus_per_node": 8, "global_batch": 1536, "planner": "ptdp"%s}`
	gpt3Eval := `, "tp": 8, "pp": 16, "microbatch": 1, "interleave": 2, "recompute": "full"`
	small := `{"model": "custom", "custom": {"name": "small", "layers": 8, "hidden": 1024, "heads": 16, "vocab": 32000, "ffn": 2048}, "seq": 1024, "precision": "fp16", "gpu": "nvidia-v100-sxm2-16gb", "nodes": 2, "gpus_per_node": 4, "inter_node_gbps": 12.5, "global_batch": 64, "planner": "ptdp", "zero": 1, "sequence_parallel": true, "top": 4}`
	bert2BW := `{"model": "custom", "custom": {"layers": 48, "hidden": 1024, "heads": 16, "vocab": 30522}, "seq": 128, "precision": "fp16", "gpu": "nvidia-v100-sxm2-16gb", "nodes": 8, "gpus_per_node": 8, "inter_node_gbps": 0.390625, "global_batch": 1024, "planner": "2bw"}`
	// A custom MoE model with grouped-query attention on H100s, one overlap
	// turned off and one on, the ZeRO stage searched (issue 10's fields).
	moe := `{"model": "custom", "custom": {"name": "moe", "layers": 8, "hidden": 1024, "heads": 16, "kv_heads": 4, "gated_ffn": true, "untied_embeddings": true,
		"vocab": 32000, "experts": 8, "topk": 2, "moe_ffn": 512, "shared_experts": 1}, "seq": 2048, "gpu": "nvidia-h100-sxm5-80gb", "nodes": 2, "gpus_per_node": 8,
		"global_batch": 64, "planner": "ptdp", "overlap_grad_reduce": false, "tp_comm_overlap": true, "top": 4}`
	// A custom MoE model whose 16 experts span both servers (ep 16, so
	// pp 1), with DeepEP's dispatcher and the expert all-to-all overlapped.
	deepep := `{"model": "custom", "custom": {"name": "moe-deepep", "layers": 8, "hidden": 1024, "heads": 16, "vocab": 32000, "experts": 16, "topk": 2, "moe_ffn": 512},
		"seq": 2048, "gpu": "nvidia-h100-sxm5-80gb", "nodes": 2, "gpus_per_node": 8, "global_batch": 64, "planner": "ptdp", "ep": 16, "pp": 1,
		"ep_dispatcher": "deepep", "overlap_ep_comm": true, "top": 4}`
	// The layer-profile planners on VGG-16's PipeDream profile over an
	// explicit topology, as `partition --level-sizes ... --level-bandwidths ...`.
	profile := `{"model": "pd-%s", "gpu": "nvidia-v100-sxm2-16gb", "levels": [%s], "global_batch": %d, "planner": "%s"%s}`
	vggLevels := `{"workers": 4, "bandwidth_bytes_per_sec": 16e9}, {"workers": 2, "bandwidth_bytes_per_sec": 1.25e9}`
	vgg := []string{"partition", "--model", "vgg16", "--level-sizes", "4,2", "--level-bandwidths", "16e9,1.25e9"}
	profileCase := func(name string, body string, args ...string) oneAnswerCase {
		return oneAnswerCase{name, append(append([]string{}, vgg...), args...), "/api/v1/plan", body, ""}
	}
	allocPaper := `{"instance": ` + read(paper) + `, "policy": "max_min_fairness_perf"}`
	allocPacked := `{"instance": ` + read(sim64) + `, "pairs": ` + read(pairs64) + `, "policy": "max_sum_throughput_packed"}`
	cases := []oneAnswerCase{
		{"GPT-3 175B on 1024 A100s, searched",
			[]string{"transformer", "--layers", "96", "--hidden", "12288", "--heads", "96", "--gpus", "1024", "--batch", "1536"},
			"/api/v1/plan", strings.Replace(gpt3, "%s", "", 1), ""},
		{"GPT-3 175B on 1024 A100s, one configuration",
			[]string{"transformer", "--layers", "96", "--hidden", "12288", "--heads", "96", "--gpus", "1024", "--batch", "1536",
				"--tp", "8", "--pp", "16", "--microbatch", "1", "--interleave", "2", "--recompute", "full"},
			"/api/v1/plan", strings.Replace(gpt3, "%s", gpt3Eval, 1), ""},
		{"a small transformer with every option",
			[]string{"transformer", "--name", "small", "--layers", "8", "--hidden", "1024", "--heads", "16", "--vocab", "32000", "--ffn", "2048",
				"--seq", "1024", "--precision", "fp16", "--gpu", "nvidia-v100-sxm2-16gb", "--gpus", "8", "--gpus-per-node", "4",
				"--inter-node-bandwidth", "12.5e9", "--batch", "64", "--zero", "1", "--sequence-parallel", "--top", "4"},
			"/api/v1/plan", small, ""},
		{"BERT-48 on 8×8 V100s, 2BW planner on a transformer spec",
			[]string{"transformer", "--planner", "2bw", "--layers", "48", "--hidden", "1024", "--heads", "16", "--vocab", "30522", "--seq", "128",
				"--precision", "fp16", "--gpu", "nvidia-v100-sxm2-16gb", "--gpus", "64", "--gpus-per-node", "8",
				"--inter-node-bandwidth", "3.90625e8", "--batch", "1024"},
			"/api/v1/plan", bert2BW, ""},
		{"a custom MoE transformer with GQA and overlaps",
			[]string{"transformer", "--name", "moe", "--layers", "8", "--hidden", "1024", "--heads", "16", "--kv-heads", "4", "--gated-ffn", "--untied-embeddings",
				"--vocab", "32000", "--experts", "8", "--topk", "2", "--moe-ffn", "512", "--shared-experts", "1", "--seq", "2048",
				"--gpu", "nvidia-h100-sxm5-80gb", "--gpus", "16", "--gpus-per-node", "8", "--batch", "64",
				"--overlap-grad-reduce=false", "--tp-comm-overlap", "--top", "4"},
			"/api/v1/plan", moe, ""},
		{"a MoE transformer over two servers with DeepEP and the all-to-all overlapped",
			[]string{"transformer", "--name", "moe-deepep", "--layers", "8", "--hidden", "1024", "--heads", "16", "--vocab", "32000",
				"--experts", "16", "--topk", "2", "--moe-ffn", "512", "--seq", "2048", "--gpu", "nvidia-h100-sxm5-80gb", "--gpus", "16",
				"--gpus-per-node", "8", "--batch", "64", "--ep", "16", "--pp", "1", "--ep-dispatcher", "deepep", "--overlap-ep-comm", "--top", "4"},
			"/api/v1/plan", deepep, ""},
		profileCase("VGG-16's PipeDream profile on 2×4 V100s, PipeDream's cost model, no memory limit",
			fmt.Sprintf(profile, "vgg16", vggLevels, 1024, "pipedream", `, "cost_model": "pipedream", "memory_bytes": -1`),
			"--batch", "1024", "--cost-model", "pipedream"),
		profileCase("VGG-16's PipeDream profile on 2×4 V100s, straight, in 8 GB",
			fmt.Sprintf(profile, "vgg16", vggLevels, 1024, "pipedream", `, "straight": true, "memory_bytes": 8e9`),
			"--batch", "1024", "--straight", "--memory-bytes", "8e9"),
		profileCase("VGG-16's PipeDream profile, 2BW planner",
			fmt.Sprintf(profile, "vgg16", vggLevels, 1024, "2bw", `, "memory_bytes": 16e9`),
			"--algorithm", "2bw", "--batch", "1024", "--memory-bytes", "16e9"),
		profileCase("VGG-16's PipeDream profile, MadPipe",
			fmt.Sprintf(profile, "vgg16", vggLevels, 1024, "madpipe", `, "memory_bytes": 12e9`),
			"--algorithm", "madpipe", "--batch", "1024", "--memory-bytes", "12e9"),
		{"Gavel §5.4.1 example, max-min fairness",
			[]string{"gavel", "allocate", "--instance", paper, "--policy", "max_min_fairness_perf"},
			"/api/v1/gavel/allocate", allocPaper, `pipeplan.allocate(` + jsString(read(paper)) + `, "max_min_fairness_perf")`},
		{"Gavel 64 jobs, space sharing",
			[]string{"gavel", "allocate", "--instance", sim64, "--pairs", pairs64, "--policy", "max_sum_throughput_packed"},
			"/api/v1/gavel/allocate", allocPacked, `pipeplan.allocate(` + jsString(allocPacked) + `)`},
	}
	// What an answer must carry to show its case's inputs took effect.
	mustContain := map[string][]string{
		"a custom MoE transformer with GQA and overlaps": {`"kv_heads":4`, `"gated_ffn":true`, `"experts":8`, `"shared_experts":1`,
			`"grad_reduce":false`, `"tp_comm":true`, `"active_params":`, `"hardware_tflops_per_gpu":`},
		"a MoE transformer over two servers with DeepEP and the all-to-all overlapped": {`"ep":16`, `"ep_dispatcher":"deepep"`, `"ep_comm":true`},
	}
	for i, c := range cases {
		if c.js == "" {
			cases[i].js = `pipeplan.plan(` + jsString(c.body) + `)`
		}
	}
	api := httptest.NewServer(server.NewAPIHandler(server.DefaultAPIOptions()))
	defer api.Close()
	page := server.OpenJSPage(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			answers := map[string]any{}
			resp, err := api.Client().Post(api.URL+c.path, "application/json", strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			var fromAPI bytes.Buffer
			fromAPI.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("API: status %d: %s", resp.StatusCode, fromAPI.String())
			}
			for _, want := range mustContain[c.name] {
				if !strings.Contains(fromAPI.String(), want) {
					t.Errorf("API answer lacks %s", want)
				}
			}
			answers["API"] = decode(t, "API", fromAPI.Bytes())
			answers["JS API"] = decode(t, "JS API", []byte(page.Eval(t, c.js)))
			var out bytes.Buffer
			if err := cli.Run(append(c.cli, "--json"), &out); err != nil {
				t.Fatalf("CLI: %v", err)
			}
			answers["CLI"] = decode(t, "CLI", out.Bytes())
			if m, ok := answers["API"].(map[string]any); !ok || (m["candidates"] == nil && m["allocation"] == nil) {
				t.Fatalf("API answer is not a plan or an allocation: %.300s", fromAPI.String())
			}
			for name, v := range answers {
				if !sameAnswer(v, answers["API"]) {
					t.Errorf("%s answers differently from the API:\n%s\nAPI:\n%s", name, describe(v), describe(answers["API"]))
				}
			}
		})
	}
}

// decode parses one front end's JSON answer, failing on an error answer.
func decode(t *testing.T, who string, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: not JSON: %v: %.300s", who, err, data)
	}
	if m, ok := v.(map[string]any); ok && m["error"] != nil {
		t.Fatalf("%s: error %v", who, m["error"])
	}
	return v
}

// describe prints a decoded answer briefly for a failure message.
func describe(v any) string {
	data, _ := json.Marshal(v)
	if len(data) > 600 {
		return string(data[:600]) + "…"
	}
	return string(data)
}

// sameAnswer reports whether two decoded JSON answers are equal, numbers
// to 1e-12 relative: the wasm build runs Go's pure-Go math functions where
// amd64 runs assembly (math.Exp, math.Log), so a figure computed through
// them may differ in its last bit (15.894973682608939 against ...946 s).
func sameAnswer(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || !sameAnswer(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameAnswer(a[i], b[i]) {
				return false
			}
		}
		return true
	case float64:
		b, ok := b.(float64)
		return ok && (a == b || math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)))
	default:
		return reflect.DeepEqual(a, b)
	}
}
