package app

import (
	"strings"
	"testing"

	"pipeplan/gpuprofiles"
)

// TestGPUPrice checks that the default price of a GPU is the first price
// list's that has it, named with that list's name and date, and that a GPU no
// list prices has none.
func TestGPUPrice(t *testing.T) {
	seen := map[string]bool{}
	for _, l := range gpuprofiles.PriceLists() {
		for id, want := range l.DollarsPerGPUHour {
			if seen[id] {
				continue
			}
			seen[id] = true
			got, src, ok := GPUPrice(id)
			if !ok || got != want || !strings.Contains(src, l.Name) || !strings.Contains(src, l.Date) {
				t.Errorf("GPUPrice(%q) = %v, %q, %v; want %v from %q (%s)", id, got, src, ok, want, l.Name, l.Date)
			}
		}
	}
	for _, id := range []string{"nvidia-a100-sxm4-80gb", "nvidia-h100-sxm5-80gb"} {
		if !seen[id] {
			t.Errorf("no price list prices %s, the Plan page's usual GPUs", id)
		}
	}
	if _, _, ok := GPUPrice("no-such-gpu"); ok {
		t.Error("an unknown GPU has a price")
	}
}
