package ui

import (
	"reflect"
	"strings"
	"testing"

	"pipeplan/app/request"
	"pipeplan/core/plan"
)

// fakeBrowser records what the UI asks of the page.
type fakeBrowser struct {
	fragment  string
	copied    string
	downloads map[string][]byte
	focused   string
}

func (f *fakeBrowser) SetFragment(s string)                         { f.fragment = s }
func (f *fakeBrowser) PageURL() string                              { return "http://test/" }
func (f *fakeBrowser) CopyText(s string) error                      { f.copied = s; return nil }
func (f *fakeBrowser) NowMillis() float64                           { return 0 }
func (f *fakeBrowser) ReadFile(string, func(string, []byte, error)) {}
func (f *fakeBrowser) StartWorker([]byte, func(float64, float64), func([]byte)) (func(), bool) {
	return nil, false
}
func (f *fakeBrowser) Focus(id string)         { f.focused = id }
func (f *fakeBrowser) SetProgress(ProgressBar) {}
func (f *fakeBrowser) Download(name, _ string, data []byte) error {
	if f.downloads == nil {
		f.downloads = map[string][]byte{}
	}
	f.downloads[name] = data
	return nil
}

func TestAppTabsAndFragment(t *testing.T) {
	b := &fakeBrowser{}
	a := NewApp(b, "")
	a.Start()
	if a.Err != "" || a.Plan.Err != "" || a.Plan.Result.Plan == nil {
		t.Fatalf("default plan: err %q / %q", a.Err, a.Plan.Err)
	}
	a.SetTab("cluster")
	if a.Err != "" || a.Cluster.Err != "" || len(a.Cluster.Result.X) != len(request.DefaultCluster().Jobs) {
		t.Fatalf("cluster tab: err %q / %q, allocation %v", a.Err, a.Cluster.Err, a.Cluster.Result.X)
	}
	a.SetTab("cost")
	if a.Err != "" || a.CostView.Err != "" || len(a.CostView.Result.Rows) != len(a.State.Cluster.Jobs) {
		t.Fatalf("cost tab: err %q / %q, %d rows", a.Err, a.CostView.Err, len(a.CostView.Result.Rows))
	}
	a.SetTab("cluster")
	restored, err := request.Decode(b.fragment)
	if err != nil || restored.Tab != "cluster" {
		t.Fatalf("fragment %q decodes to tab %q, %v", b.fragment, restored.Tab, err)
	}
	a.CopyLink()
	if !strings.HasPrefix(b.copied, "http://test/#v1.") || a.ShareLink != b.copied {
		t.Errorf("copied %q, share link %q", b.copied, a.ShareLink)
	}
}

func TestAppBadInputKeepsState(t *testing.T) {
	a := NewApp(&fakeBrowser{}, "")
	a.Start()
	before := a.State.Plan
	a.SetPlanInput("nodes", "-3")
	if changed := !reflect.DeepEqual(a.State.Plan, before); !strings.Contains(a.Err, "plan.nodes") || changed {
		t.Errorf("bad nodes: err %q, state changed %v", a.Err, changed)
	}
}

func TestAppExport(t *testing.T) {
	b := &fakeBrowser{}
	a := NewApp(b, "")
	a.Start()
	a.ExportPlan()
	if len(b.downloads["plan.json"]) == 0 || a.ExportCommand == "" {
		t.Errorf("export: %d bytes, command %q, err %q", len(b.downloads["plan.json"]), a.ExportCommand, a.Err)
	}
}

// TestAddPlannedJobThatFitsNowhere: one transformer layer of h = 65,536
// (51.5 billion parameters only tensor parallelism inside a server can
// split) fits no Gavel GPU at any scale without ZeRO (pinned at 0; ZeRO-3
// would shard it over the replicas); the error is shown and the job list
// is unchanged.
func TestAddPlannedJobThatFitsNowhere(t *testing.T) {
	a := NewApp(&fakeBrowser{}, "")
	a.Start()
	for _, in := range [][2]string{{"model", "custom"}, {"custom.layers", "1"}, {"custom.hidden", "65536"}, {"custom.heads", "512"}, {"zero", "0"}} {
		if a.SetPlanInput(in[0], in[1]); a.Err != "" {
			t.Fatalf("%s = %s: %s", in[0], in[1], a.Err)
		}
	}
	a.SetClusterWorkload(request.WorkloadJobTypes)
	before := len(a.State.Cluster.Jobs)
	a.AddPlannedJob()
	if !strings.Contains(a.Err, "fits on no GPU type") || len(a.State.Cluster.Jobs) != before {
		t.Errorf("err %q, %d jobs (was %d)", a.Err, len(a.State.Cluster.Jobs), before)
	}
	a.SetJob(0, "steps", "")
	a.SetJob(1, "slo", "2.5")
	if j := a.State.Cluster.Jobs; j[0].Steps != 0 || j[1].SLOHours != 2.5 || a.Err != "" {
		t.Errorf("steps %v, SLO %v, err %q", j[0].Steps, j[1].SLOHours, a.Err)
	}
	a.SetJob(1, "slo", "-1")
	if !strings.Contains(a.Err, "slo_hours") || a.State.Cluster.Jobs[1].SLOHours != 2.5 {
		t.Errorf("negative SLO: err %q, SLO %v", a.Err, a.State.Cluster.Jobs[1].SLOHours)
	}
}

// TestUnknownPresetFallsBack checks that a link naming a preset this build
// lacks opens on the default model, keeping the rest of the link, with a
// banner that names the preset.
func TestUnknownPresetFallsBack(t *testing.T) {
	st := request.Default()
	st.Plan.Model, st.Plan.Nodes = "gpt-9000", 64
	frag, err := plan.EncodeFragment(st)
	if err != nil {
		t.Fatal(err)
	}
	a := NewApp(&fakeBrowser{}, frag)
	if a.State.Plan.Model != request.Default().Plan.Model || a.State.Plan.Nodes != 64 {
		t.Errorf("model %q, nodes %d; want the default model and the link's 64 nodes", a.State.Plan.Model, a.State.Plan.Nodes)
	}
	if !strings.Contains(a.Err, `unknown preset "gpt-9000"`) || !strings.Contains(a.Err, "GPT-3 175B") {
		t.Errorf("banner %q", a.Err)
	}
}

// TestPlanPageMoEInputs: the MoE token dispatcher and the all-to-all
// overlap are inputs only for mixture-of-experts models; set through the
// form (the request's field names), they reach the request and the URL
// (app's TestPlanEPDispatcher follows them into the execution); a bad
// dispatcher names the field and the value.
func TestPlanPageMoEInputs(t *testing.T) {
	b := &fakeBrowser{}
	a := NewApp(b, "")
	page := &PlanPage{App: a}
	if page.isMoE() {
		t.Fatalf("the default model (%s) shows the MoE inputs", a.State.Plan.Model)
	}
	a.SetPlanInput("model", "mixtral-8x7b")
	if a.Err != "" || !page.isMoE() {
		t.Fatalf("mixtral-8x7b: err %q, MoE inputs shown %v", a.Err, page.isMoE())
	}
	a.SetPlanInput("ep_dispatcher", "nccl")
	if !strings.HasPrefix(a.Err, `plan.ep_dispatcher: `) || !strings.Contains(a.Err, `"nccl"`) || a.State.Plan.EPDispatcher != "" {
		t.Fatalf("bad dispatcher: err %q, state %q", a.Err, a.State.Plan.EPDispatcher)
	}
	a.Err = ""
	a.SetPlanInput("ep_dispatcher", "deepep")
	a.SetPlanBool("overlap_ep_comm", true)
	if a.Err != "" || a.State.Plan.EPDispatcher != "deepep" || !a.State.Plan.OverlapEPComm {
		t.Fatalf("err %q, plan %+v", a.Err, a.State.Plan)
	}
	restored, err := request.Decode(b.fragment)
	if err != nil || restored.Plan.EPDispatcher != "deepep" || !restored.Plan.OverlapEPComm {
		t.Fatalf("the URL restores %+v, %v", restored.Plan, err)
	}
	a.SetPlanInput("model", "custom")
	if page.isMoE() {
		t.Error("the custom dense transformer shows the MoE inputs")
	}
	a.SetPlanInput("custom.experts", "8")
	if !page.isMoE() {
		t.Error("the custom transformer with 8 experts hides the MoE inputs")
	}
}

// TestAppLaunch: the Plan page shows the selected plan's launch artifact
// for the chosen engine and copies it.
func TestAppLaunch(t *testing.T) {
	b := &fakeBrowser{}
	a := NewApp(b, "")
	a.Start()
	l, ok := a.Launch()
	if !ok || l.Format != "megatron" || !strings.Contains(l.Text, "pretrain_gpt.py") {
		t.Fatalf("default launch artifact: %v %+v", ok, l)
	}
	a.SetLaunchFormat("slurm")
	a.CopyLaunch()
	if l, _ := a.Launch(); l.Format != "slurm" || b.copied != l.Text || !strings.HasPrefix(b.copied, "#!/bin/bash") || !strings.HasSuffix(a.LaunchStatus, "copied") {
		first, _, _ := strings.Cut(b.copied, "\n")
		t.Errorf("slurm: format %q, copied %q…, status %q", l.Format, first, a.LaunchStatus)
	}
	a.SetLaunchFormat("no-such-engine")
	if l, _ := a.Launch(); l.Format != "megatron" {
		t.Errorf("an unknown format shows %q, want the first (megatron)", l.Format)
	}
}
