package cost

import (
	"os"
	"strings"
	"testing"
)

// FuzzReadPublishedRuns checks that ReadPublishedRuns never panics, that
// an error names the decoding or the run and field, and that what it
// accepts is what ComparePublished needs: GPUs per server at least 1 and
// dividing the GPUs, a positive network bandwidth and published TFLOP/s.
func FuzzReadPublishedRuns(f *testing.F) {
	if data, err := os.ReadFile("testdata/published_runs.json"); err == nil {
		f.Add(string(data))
	}
	run := `{"id":"a","source_name":"s","model":"llama3-8b","gpu":"g","gpus":16,"gpus_per_node":8,"inter_node_gbit_per_gpu":400,` +
		`"published_model_tflops_per_gpu":400,"set":"held_out","source":"src"`
	for _, s := range []string{"", "{}", `{"runs":[]}`, `{"runs":[` + run + `}]}`,
		`{"runs":[` + run + `,"gpus_per_node":0}]}`, `{"runs":[` + run + `,"gpus":12}]}`, `{"runs":[` + run + `,"set":"x"}]}`,
		`{"runs":[` + run + `,"published_tokens_per_sec_per_gpu":-1}]}`, `{"runs":[` + run + `,"source_name":""}]}`, `{"runs":[1]}`} {
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
			if r.GPUsPerNode < 1 || r.GPUs%r.GPUsPerNode != 0 || !(r.InterNodeGbit > 0) || !(r.PublishedTFLOPS > 0) || r.ID == "" {
				t.Fatalf("accepted %+v", r)
			}
		}
	})
}
