package gpuprofiles

import (
	"os"
	"testing"
	"time"
)

// TestFirstUseTiming logs what the first use of the package costs in a
// fresh process (the page's first render: the GPUs, the price lists, the
// servers). Run it alone, e.g. in wasm under node:
//
//	PIPEPLAN_TIMINGS=1 GOOS=js GOARCH=wasm go test -exec="$(go env GOROOT)/lib/wasm/go_js_wasm_exec" -run '^TestFirstUseTiming$' -v ./gpuprofiles
func TestFirstUseTiming(t *testing.T) {
	if os.Getenv("PIPEPLAN_TIMINGS") == "" {
		t.Skip("set PIPEPLAN_TIMINGS=1 to time the first use")
	}
	start := time.Now()
	All()
	gpus := time.Since(start)
	PriceLists()
	cloud := time.Since(start) - gpus
	if _, err := ServerOf("v100"); err != nil {
		t.Fatal(err)
	}
	t.Logf("first use: All %v, PriceLists %v, ServerOf %v, total %v", gpus, cloud, time.Since(start)-gpus-cloud, time.Since(start))
}
