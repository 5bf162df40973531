package request

import (
	"math"
	"pipeplan/core/plan"
	"reflect"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	s := Default()
	s.Tab = "cluster"
	s.Plan.GPU = "nvidia-h100-sxm5-80gb"
	s.Plan.Nodes = 3
	f, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode("#" + f)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("round trip: got %+v, want %+v", got, s)
	}
}

// llmState is a state using the architecture and execution fields: a
// custom MoE model with GQA, ZeRO pinned at 0 (not searched) and overlaps
// set both ways.
func llmState() State {
	s := Default()
	off, on, zero := false, true, 0
	s.Plan.Model = "custom"
	s.Plan.Custom = CustomModel{Name: "moe", Layers: 16, Hidden: 2048, Heads: 16, KVHeads: 4, GatedFFN: true, UntiedEmbeddings: true,
		Experts: 64, TopK: 6, MoEFFN: 1408, SharedExperts: 2, Vocab: 102400}
	s.Plan.ZeRO, s.Plan.OverlapGradReduce, s.Plan.TPCommOverlap = &zero, &off, &on
	s.Plan.CP, s.Plan.CPComm = 2, "all_gather"
	return s
}

// TestRoundTripArchitectureAndOverlap: the new fields survive the URL
// fragment, ZeRO 0 stays pinned (distinct from searched) and an unset
// overlap stays unset (the GPU's default).
func TestRoundTripArchitectureAndOverlap(t *testing.T) {
	s := llmState()
	f, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) || got.Plan.ZeRO == nil || got.Plan.OverlapParamGather != nil {
		t.Errorf("round trip: got %+v, want %+v", got.Plan, s.Plan)
	}
	searched := Default()
	if f, err = Encode(searched); err != nil {
		t.Fatal(err)
	}
	if got, err := Decode(f); err != nil || got.Plan.ZeRO != nil {
		t.Errorf("default state: zero %v, %v; want searched (nil)", got.Plan.ZeRO, err)
	}
}

func TestDecodeBadFragmentFallsBackToDefaults(t *testing.T) {
	good, err := Encode(Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, frag := range []string{
		"garbage",
		"v1.!!!!",
		good[:len(good)/2],                 // truncated
		"v1." + strings.Repeat("A", 70000), // oversized
		"v9.abc",
	} {
		s, err := Decode(frag)
		if err == nil {
			t.Errorf("Decode(%.20q): want an error", frag)
		}
		if !reflect.DeepEqual(s, Default()) {
			t.Errorf("Decode(%.20q): want the default state, got %+v", frag, s)
		}
	}
}

func TestDecodeRejectsInvalidValues(t *testing.T) {
	s := Default()
	s.Plan.Nodes = 0
	f, err := encodeUnchecked(s)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Decode(f)
	if err == nil || !strings.Contains(err.Error(), "plan.nodes") {
		t.Errorf("nodes 0: err = %v, want one naming plan.nodes", err)
	}
}

// TestValidateTextIsUTF8: text the fragment and JSON carry must be UTF-8
// (JSON would replace a bad byte, so a link would not restore it).
func TestValidateTextIsUTF8(t *testing.T) {
	s := Default()
	s.Plan.Model, s.Plan.HFConfig = HFModel, "{\xad}"
	if err := s.Validate(); err == nil || Field(err) != "plan.hf_config" || !strings.Contains(err.Error(), `"{\xad}"`) {
		t.Errorf("hf_config: err = %v", err)
	}
	s = Default()
	s.Plan.Custom.Name = "\xbd"
	if err := s.Validate(); err == nil || Field(err) != "plan.custom.name" {
		t.Errorf("custom.name: err = %v", err)
	}
}

func TestEncodeRejectsInvalidState(t *testing.T) {
	s := Default()
	s.Plan.Planner = "magic"
	if _, err := Encode(s); err == nil || !strings.Contains(err.Error(), "plan.planner") {
		t.Errorf("err = %v, want one naming plan.planner", err)
	}
}

func FuzzDecode(f *testing.F) {
	good, _ := Encode(Default())
	f.Add(good)
	f.Add("")
	f.Add("#v1.")
	f.Add("v1.q1YqyUhMKcpMLVKyUkosLc7ILy1JLMpXqAUA")
	if frag, err := Encode(llmState()); err == nil {
		f.Add(frag)
	} else {
		f.Fatal(err)
	}
	withJobs := Default()
	withJobs.Cluster.Workload, withJobs.Cluster.GPUs = WorkloadJobTypes, []int{8, 8, 8}
	planned := withJobs.Plan
	withJobs.Cluster.Jobs = append(withJobs.Cluster.Jobs, Job{Type: "planned: GPT-3 175B", Scale: 8, Weight: 1, Steps: 1000, SLOHours: 2.5, Planned: &planned})
	if frag, err := Encode(withJobs); err == nil {
		f.Add(frag)
	} else {
		f.Fatal(err)
	}
	withJobs.Cluster.PlacementSensitive = true
	if frag, err := Encode(withJobs); err == nil {
		f.Add(frag)
	} else {
		f.Fatal(err)
	}
	withJobs.Cluster.TraceWorkload = TraceListedJobs
	if frag, err := Encode(withJobs); err == nil {
		f.Add(frag)
	} else {
		f.Fatal(err)
	}
	// Past MaxPlannedRuns (BENCHMARKS.md, "Worst cases"): 64 planned jobs.
	for len(withJobs.Cluster.Jobs) < MaxJobs {
		withJobs.Cluster.Jobs = append(withJobs.Cluster.Jobs, withJobs.Cluster.Jobs[len(withJobs.Cluster.Jobs)-1])
	}
	if frag, err := plan.EncodeFragment(withJobs); err == nil {
		f.Add(frag)
	} else {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, frag string) {
		s, err := Decode(frag)
		if err != nil {
			if !reflect.DeepEqual(s, Default()) {
				t.Fatalf("error %v but state is not the default", err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("decoded an invalid state: %v", err)
		}
		again, err := Encode(s)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if s2, err := Decode(again); err != nil || !reflect.DeepEqual(s2, s) {
			t.Fatalf("re-decode: %+v, %v", s2, err)
		}
	})
}

func TestDecodeOmittedFieldsKeepDefaults(t *testing.T) {
	f, err := plan.EncodeFragment(map[string]any{"tab": "cost", "plan": map[string]any{"nodes": 2}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Tab, want.Plan.Nodes = "cost", 2
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %+v, want the defaults with tab and nodes set", s)
	}
}

// TestClusterJobFieldsValidate checks the per-job steps, SLO and planned
// inputs name the job and field when bad.
func TestClusterJobFieldsValidate(t *testing.T) {
	for _, c := range []struct {
		change func(j *Job)
		field  string
	}{
		{func(j *Job) { j.Steps = -1 }, "cluster.jobs[1].steps"},
		{func(j *Job) { j.Steps = math.NaN() }, "cluster.jobs[1].steps"},
		{func(j *Job) { j.SLOHours = math.Inf(1) }, "cluster.jobs[1].slo_hours"},
		{func(j *Job) { j.Planned = &Plan{Model: "gpt-1.7b"} }, "cluster.jobs[1].planned.plan.gpu"},
	} {
		cl := PaperCluster()
		c.change(&cl.Jobs[1])
		if err := cl.Validate(); err == nil || !strings.Contains(err.Error(), c.field) || !strings.HasPrefix(c.field, Field(err)) {
			t.Errorf("err = %v, want one naming %s", err, c.field)
		}
	}
}

// TestClusterGPUsValidate: a GPU type may have none, the cluster may not.
func TestClusterGPUsValidate(t *testing.T) {
	cl := PaperCluster()
	cl.GPUs = []int{0, 1}
	if err := cl.Validate(); err != nil {
		t.Fatalf("one empty GPU type: %v", err)
	}
	cl.GPUs = []int{0, 0}
	if err := cl.Validate(); err == nil || !strings.Contains(err.Error(), "cluster.gpus: need at least one GPU") {
		t.Fatalf("no GPUs: err = %v", err)
	}
}

// TestGPUsPerNodeNVLinkDomain: a node may be a GB200 NVL72 rack's 72-GPU
// NVLink domain, while nodes × GPUs per node stays within MaxGPUs, the
// bound that keeps a link's work small; past it the error names the
// nodes and the product in words.
func TestGPUsPerNodeNVLinkDomain(t *testing.T) {
	p := Default().Plan
	p.GPU, p.Nodes, p.GPUsPerNode = "nvidia-gb200-gpu", 2, 72
	if err := p.Validate(); err != nil {
		t.Errorf("2 racks of 72: %v", err)
	}
	p.GPUsPerNode = MaxGPUsPerNode + 1
	if err := p.Validate(); err == nil || Field(err) != "plan.gpus_per_node" {
		t.Errorf("%d GPUs per node: %v, want an error naming plan.gpus_per_node", p.GPUsPerNode, err)
	}
	p.Nodes, p.GPUsPerNode = MaxGPUs/72+1, 72
	if err := p.Validate(); err == nil || Field(err) != "plan.nodes" || !strings.Contains(err.Error(), "over the 65536") {
		t.Errorf("%d nodes of 72: %v, want an error naming plan.nodes and the bound", p.Nodes, err)
	}
}
