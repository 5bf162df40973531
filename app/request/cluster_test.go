package request

import (
	"reflect"
	"strings"
	"testing"

	"pipeplan/core/plan"
)

// TestPlacementSensitiveRoundTrip: the Cluster page's placement-sensitive
// flag survives the URL fragment, and a fragment without it (a link made
// before the flag existed) decodes with it off.
func TestPlacementSensitiveRoundTrip(t *testing.T) {
	s := Default()
	s.Tab = "cluster"
	s.Cluster.Workload, s.Cluster.GPUs = WorkloadJobTypes, []int{8, 8, 8}
	s.Cluster.PlacementSensitive = true
	f, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode("#" + f)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Cluster.PlacementSensitive || !reflect.DeepEqual(got, s) {
		t.Errorf("round trip: got %+v, want %+v", got.Cluster, s.Cluster)
	}

	off, err := Encode(Default())
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := plan.DecodeFragment(off, &raw); err != nil {
		t.Fatal(err)
	}
	if cl, _ := raw["cluster"].(map[string]any); cl == nil || cl["placement_sensitive"] != nil {
		t.Errorf("a fragment with the flag off: cluster %v, want one without placement_sensitive", raw["cluster"])
	}
	old, err := plan.EncodeFragment(map[string]any{"tab": "cluster", "cluster": map[string]any{"workload": WorkloadJobTypes, "gpus": []int{8, 8, 8}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err = Decode(old)
	if err != nil {
		t.Fatal(err)
	}
	if got.Cluster.PlacementSensitive || got.Cluster.Workload != WorkloadJobTypes {
		t.Errorf("old fragment decodes to %+v, want job types with placement off", got.Cluster)
	}
}

// TestTraceWorkloadRoundTrip: the trace workload survives the URL fragment,
// Gavel's job types (the default) leave no trace_workload in it, so older
// links decode unchanged, and an unknown workload is refused by name.
func TestTraceWorkloadRoundTrip(t *testing.T) {
	s := Default()
	s.Cluster.Workload, s.Cluster.GPUs = WorkloadJobTypes, []int{8, 8, 8}
	s.Cluster.TraceWorkload = TraceListedJobs
	f, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode("#" + f)
	if err != nil || got.Cluster.TraceWorkload != TraceListedJobs || !reflect.DeepEqual(got, s) {
		t.Errorf("round trip: got %+v, %v; want %+v", got.Cluster, err, s.Cluster)
	}

	s.Cluster.TraceWorkload = TraceGavelJobTypes
	f, err = Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := plan.DecodeFragment(f, &raw); err != nil {
		t.Fatal(err)
	}
	if cl, _ := raw["cluster"].(map[string]any); cl == nil || cl["trace_workload"] != nil {
		t.Errorf("Gavel's job types: cluster %v, want one without trace_workload", raw["cluster"])
	}

	s.Cluster.TraceWorkload = "gavel"
	if err := s.Cluster.Validate(); err == nil || !strings.Contains(err.Error(), `cluster.trace_workload: must be "" (Gavel's job types) or "listed", got "gavel"`) {
		t.Errorf("unknown trace workload: err %v", err)
	}
}
