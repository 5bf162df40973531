package request

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestOldClusterLinksDecode: links made while the Cluster page opened on
// the §5.4.1 example still open on what they showed (stored fragments,
// testdata/old_cluster_links.json says how they were made). They carried
// every Cluster field without omitempty, so the new default shows through
// nowhere; the fields they omitted (worker_types, placement_sensitive,
// trace_workload, a job's steps, slo_hours, planned) decode to what
// omission meant then: Gavel's types, off, Gavel's job types, not given.
func TestOldClusterLinksDecode(t *testing.T) {
	data, err := os.ReadFile("testdata/old_cluster_links.json")
	if err != nil {
		t.Fatal(err)
	}
	var links map[string]string
	if err := json.Unmarshal(data, &links); err != nil {
		t.Fatal(err)
	}
	s, err := Decode(links["default"])
	if err != nil {
		t.Fatal(err)
	}
	if s.Tab != "cluster" || !reflect.DeepEqual(s.Cluster, PaperCluster()) {
		t.Errorf("the old default link decodes to tab %q, cluster %+v; want the paper example %+v", s.Tab, s.Cluster, PaperCluster())
	}
	s, err = Decode(links["job_types"])
	if err != nil {
		t.Fatal(err)
	}
	want := PaperCluster()
	want.Workload, want.GPUs, want.Jobs = WorkloadJobTypes, []int{4, 0, 2}, want.Jobs[:2]
	if !reflect.DeepEqual(s.Cluster, want) {
		t.Errorf("the old job-types link decodes to %+v, want %+v", s.Cluster, want)
	}
	if got := s.Cluster.Types(); !reflect.DeepEqual(got, []string{"v100", "p100", "k80"}) {
		t.Errorf("its GPU types %v, want Gavel's", got)
	}
}

// TestDecodedJobsStartFromScratch: a listed job does not take the fields
// it omits from the job at its index in the list it is decoded into
// (encoding/json decodes into existing slice elements), and a job's
// unknown field or wrong type is still an error naming it.
func TestDecodedJobsStartFromScratch(t *testing.T) {
	c := DefaultCluster()
	c.Jobs[0].Steps, c.Jobs[0].SLOHours, c.Jobs[0].Planned = 1000, 2, &Plan{Model: "gpt-1.7b"}
	if err := json.Unmarshal([]byte(`{"jobs":[{"type":"A3C","scale":1,"weight":3}]}`), &c); err != nil {
		t.Fatal(err)
	}
	if want := []Job{{Type: "A3C", Scale: 1, Weight: 3}}; !reflect.DeepEqual(c.Jobs, want) {
		t.Errorf("jobs %+v, want %+v", c.Jobs, want)
	}
	for body, want := range map[string]string{
		`{"jobs":[{"type":"A3C","scale":1,"weight":1,"bogus":1}]}`: `unknown field "bogus"`,
		`{"jobs":[{"type":"A3C","scale":"two","weight":1}]}`:       "cluster.jobs.scale: must be a JSON int",
	} {
		if _, err := DecodeCluster([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", body, err, want)
		}
	}
}

// TestDefaultClusterIsWholeServers: the default cluster validates, has
// Gavel's types (so links omitting worker_types mean what they did) in
// whole servers of their real sizes.
func TestDefaultClusterIsWholeServers(t *testing.T) {
	c := DefaultCluster()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.WorkerTypes != nil {
		t.Errorf("worker types %v: omitted in links, they must be Gavel's (nil)", c.WorkerTypes)
	}
	sizes, err := c.GPUsPerServer()
	if err != nil {
		t.Fatal(err)
	}
	for j, n := range c.GPUs {
		if n == 0 || n%sizes[j] != 0 {
			t.Errorf("%s: %d GPUs, not whole servers of %d", c.Types()[j], n, sizes[j])
		}
	}
	if _, err := (Cluster{Workload: WorkloadJobTypes, WorkerTypes: []string{"nope"}}).GPUsPerServer(); err == nil || !strings.Contains(err.Error(), "cluster.worker_types") {
		t.Errorf("unknown type: err = %v, want one naming cluster.worker_types", err)
	}
}
