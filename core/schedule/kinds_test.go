package schedule

import "testing"

// Every kind a plan may name has a generator.
func TestKindsHaveGenerators(t *testing.T) {
	for _, k := range Kinds {
		if _, ok := generators[k]; !ok {
			t.Errorf("no generator for %q", k)
		}
	}
}
