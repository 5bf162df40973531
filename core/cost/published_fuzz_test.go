package cost

import (
	"os"
	"strings"
	"testing"
)

// FuzzReadPublishedRuns checks that ReadPublishedRuns never panics, that
// an error names the decoding or the run and field, and that what it
// accepts is what ComparePublished needs: GPUs per server at least 1 and
// dividing the GPUs, a positive network bandwidth and published TFLOP/s;
// and that a run names a fitted constant exactly when it is a fit run.
func FuzzReadPublishedRuns(f *testing.F) {
	if data, err := os.ReadFile("testdata/published_runs.json"); err == nil {
		f.Add(string(data))
	}
	run := `{"id":"a","source_name":"s","model":"llama3-8b","gpu":"g","gpus":16,"gpus_per_node":8,"inter_node_gbit_per_gpu":400,` +
		`"published_model_tflops_per_gpu":400,"set":"held_out","source":"src"`
	for _, s := range []string{"", "{}", `{"runs":[]}`, `{"runs":[` + run + `}]}`,
		`{"runs":[` + run + `,"gpus_per_node":0}]}`, `{"runs":[` + run + `,"gpus":12}]}`, `{"runs":[` + run + `,"set":"x"}]}`,
		`{"runs":[` + run + `,"set":"fit"}]}`, `{"runs":[` + run + `,"fits":"DefaultP2PExposed"}]}`,
		`{"runs":[` + run + `,"set":"fit","fits":"DefaultP2PExposed"}]}`,
		`{"runs":[` + run + `,"published_tokens_per_sec_per_gpu":-1}]}`, `{"runs":[` + run + `,"source_name":""}]}`, `{"runs":[1]}`,
		`{"runs":[` + run + `,"seq":8}],"hf_configs":{"llama3-8b":{"model_type":"llama4","text_config":{"num_hidden_layers":2,"hidden_size":64,"num_attention_heads":4,"vocab_size":10,"max_position_embeddings":8,"num_local_experts":4,"num_experts_per_tok":1,"interleave_moe_layer_step":2}}}}`,
		`{"runs":[` + run + `}],"hf_configs":{"llama3-8b":{"model_type":"gpt2"}}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		runs, err := ReadPublishedRuns([]byte(s))
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "published runs:") && !strings.HasPrefix(msg, "runs[") {
				t.Fatalf("error %q names neither the decoding nor the run", msg)
			}
			return
		}
		for _, r := range runs {
			if r.GPUsPerNode < 1 || r.GPUs%r.GPUsPerNode != 0 || !(r.InterNodeGbit > 0) || !(r.PublishedTFLOPS > 0) || r.ID == "" ||
				(r.Set == "fit") != (r.Fits != "") {
				t.Fatalf("accepted %+v", r)
			}
			if r.HFConfig != nil {
				if _, err := r.Transformer(nil); err != nil {
					t.Fatalf("accepted a run whose model config does not read: %v", err)
				}
			}
		}
	})
}
