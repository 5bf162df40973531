package request

import (
	"strings"
	"testing"
)

// TestDecodePlanProfileOptions checks each profile option's default and
// validation: omitted, they keep the page's behaviour; bad, the error
// names the field and the value.
func TestDecodePlanProfileOptions(t *testing.T) {
	p, err := DecodePlan([]byte(`{"model": "pd-vgg16"}`))
	if err != nil || p.CostModel != "" || p.Straight || p.Levels != nil || p.MemoryLimit(16e9) != 16e9 {
		t.Fatalf("defaults: %+v, %v", p.ProfileOptions, err)
	}
	p, err = DecodePlan([]byte(`{"model": "pd-vgg16", "cost_model": "pipedream", "straight": true, "memory_bytes": -1,
		"levels": [{"workers": 4, "bandwidth_bytes_per_sec": 16e9}, {"workers": 2, "bandwidth_bytes_per_sec": 1.25e9}]}`))
	if err != nil || p.CostModel != "pipedream" || !p.Straight || len(p.Levels) != 2 || p.MemoryLimit(16e9) != 0 {
		t.Fatalf("given: %+v, %v", p.ProfileOptions, err)
	}
	for _, c := range []struct{ body, field, want string }{
		{`"cost_model": "paper"`, "plan.cost_model", `got "paper"`},
		{`"levels": [{"workers": 0, "bandwidth_bytes_per_sec": 1e9}]`, "plan.levels[0].workers", "got 0"},
		{`"levels": [{"workers": 2, "bandwidth_bytes_per_sec": 0}]`, "plan.levels[0].bandwidth_bytes_per_sec", "got 0"},
		{`"levels": [{"workers": 4096, "bandwidth_bytes_per_sec": 1e9}, {"workers": 32, "bandwidth_bytes_per_sec": 1e9}]`, "plan.levels[1].workers", "got 131072"},
		{`"memory_bytes": -2`, "plan.memory_bytes", "got -2"},
		{`"memory_bytes": -1, "planner": "madpipe"`, "plan.memory_bytes", "got -1 (unlimited)"},
	} {
		_, err := DecodePlan([]byte(`{"model": "pd-vgg16", ` + c.body + `}`))
		if Field(err) != c.field || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want field %s and %q", c.body, err, c.field, c.want)
		}
	}
}
