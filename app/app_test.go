package app

import (
	"context"
	"math"
	"strings"
	"testing"

	"pipeplan/app/request"
)

// TestAllocateInstancePaperExample solves the §5.4.1 example (Figure 5.5)
// under heterogeneity-aware max-min fairness: job 0 gets 0.45 of the V100.
func TestAllocateInstancePaperExample(t *testing.T) {
	inst := `{"worker_types": ["v100", "k80"], "num_workers": [1, 1],
		"jobs": [{"id": 0, "scale_factor": 1}, {"id": 1, "scale_factor": 1}, {"id": 2, "scale_factor": 1}],
		"throughputs": [[40, 10], [12, 4], [100, 50]]}`
	req := request.Allocate{Instance: []byte(inst), Policy: "max_min_fairness_perf"}
	al, err := AllocateInstance(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if x := al.X[0][0]; math.Abs(x-0.45) > 0.005 || len(al.Instance.Jobs) != 3 {
		t.Errorf("job 0 on the V100: %v, want the paper's 0.45", x)
	}
	for _, c := range []struct {
		change func(*request.Allocate)
		field  string
	}{
		{func(r *request.Allocate) { r.Policy = "nope" }, "policy"},
		{func(r *request.Allocate) { r.Instance = []byte(`{"worker_types": []}`) }, "instance"},
		{func(r *request.Allocate) { r.Pairs = []byte(`{`) }, "pairs"},
		{func(r *request.Allocate) { r.PricesPerHour = []float64{1} }, "prices_per_hour"},
	} {
		r := req
		c.change(&r)
		if _, err := AllocateInstance(context.Background(), r); err == nil || request.Field(err) != c.field || !strings.Contains(err.Error(), c.field) {
			t.Errorf("want an error naming %s, got %v", c.field, err)
		}
	}
}
