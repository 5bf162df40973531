package modelprofiles

import (
	"os"
	"testing"
	"time"
)

// TestFirstUseTiming logs what building every LLM preset costs in a fresh
// process (app builds them all at program start). Run it alone, e.g. in
// wasm under node:
//
//	PIPEPLAN_TIMINGS=1 GOOS=js GOARCH=wasm go test -exec="$(go env GOROOT)/lib/wasm/go_js_wasm_exec" -run '^TestFirstUseTiming$' -v ./modelprofiles
func TestFirstUseTiming(t *testing.T) {
	if os.Getenv("PIPEPLAN_TIMINGS") == "" {
		t.Skip("set PIPEPLAN_TIMINGS=1 to time the first use")
	}
	start := time.Now()
	for _, l := range LLMs() {
		if _, _, err := Transformer(l.ID); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("first use: %d LLM presets in %v", len(llms), time.Since(start))
}
