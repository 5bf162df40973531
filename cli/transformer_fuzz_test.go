package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
)

// FuzzTransformerArgs appends arbitrary flags to a small transformer run:
// the command must fail with an error or print valid JSON (app.Result),
// never panic.
func FuzzTransformerArgs(f *testing.F) {
	for _, s := range []string{
		"",
		"--tp 2 --pp 2 --microbatch 1 --interleave 2 --recompute full",
		"--tp 3",
		"--gpus 0",
		"--inter-node-bandwidth NaN --sequence-parallel",
		"--recompute selective --allow-cross-node-tp --tp 8",
		"--heads 7 --hidden 700 --precision fp8 --gpu nvidia-v100-sxm2-16gb",
		"--batch -4 --top 0",
		"--planner 2bw --pp 4 --microbatch 2 --recompute full",
		"--schedule gpipe --tp 2 --pp 2 --microbatch 1 --interleave 1 --recompute full",
		"--kv-heads 4 --gated-ffn --untied-embeddings --experts 8 --topk 2 --moe-ffn 512 --shared-experts 1",
		"--zero 3 --overlap-grad-reduce=false --tp-comm-overlap --overlap-param-gather=false",
		"--experts 4 --topk 5",
	} {
		f.Add(s)
	}
	base := []string{"transformer", "--layers", "8", "--hidden", "1024", "--heads", "16", "--gpus", "16", "--gpus-per-node", "4", "--batch", "32", "--json"}
	f.Fuzz(func(t *testing.T, extra string) {
		args := strings.Fields(extra)
		if len(args) > 16 || strings.Contains(extra, "export") || strings.Contains(extra, "json") {
			return // keep runs small, JSON, and never write files
		}
		for _, a := range args {
			if v, err := strconv.ParseFloat(a, 64); err == nil && (v > 4096 || v < -4096) {
				return // sizes beyond a small search
			}
		}
		null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer null.Close()
		stderr := os.Stderr
		os.Stderr = null // flag errors print usage there
		defer func() { os.Stderr = stderr }()
		var out bytes.Buffer
		if err := Run(append(append([]string{}, base...), args...), &out); err != nil {
			if strings.Contains(err.Error(), "unsupported value") {
				t.Fatalf("%q: non-finite output: %v", extra, err)
			}
			return
		}
		var v map[string]any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("%q: output is not JSON: %v", extra, err)
		}
		if v["params"] == nil || v["candidates"] == nil {
			t.Fatalf("%q: output lacks params or candidates: %v", extra, v)
		}
	})
}
