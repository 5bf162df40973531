package ui

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"pipeplan/app/request"
)

// The form setters take the text of an input the user typed (or a value a
// script put in the page). Each fuzzer checks the one contract they share:
// a bad value is shown as an error naming the field and the value and leaves
// the state unchanged; a good one gives a valid state that the URL fragment
// written for it restores.

// setterApp is a fresh, not started App (setters then compute nothing).
func setterApp() (*App, *fakeBrowser) {
	b := &fakeBrowser{}
	return NewApp(b, ""), b
}

// checkSetter checks the contract after a setter ran on a fresh App; field
// is what the error must name and values what it must show (one of them:
// the text as typed, quoted, or the number it parsed to).
func checkSetter(t *testing.T, a *App, b *fakeBrowser, before request.State, field string, values ...string) {
	t.Helper()
	if a.Err != "" {
		if !strings.Contains(a.Err, field) {
			t.Fatalf("error %q does not name %s", a.Err, field)
		}
		shown := false
		for _, v := range values {
			shown = shown || v != "" && strings.Contains(a.Err, v)
		}
		if !shown {
			t.Fatalf("error %q shows none of %q", a.Err, values)
		}
		if len(a.Err) > 1000+4*len(field+strings.Join(values, "")) {
			t.Fatalf("error of %d bytes", len(a.Err))
		}
		if !reflect.DeepEqual(a.State, before) {
			t.Fatalf("error %q, but the state changed", a.Err)
		}
		return
	}
	if err := a.State.Validate(); err != nil {
		t.Fatalf("accepted a value that gives an invalid state: %v", err)
	}
	if b.fragment == "" {
		t.Fatalf("state changed but no URL fragment written")
	}
	restored, err := request.Decode(b.fragment)
	if err != nil || !reflect.DeepEqual(restored, a.State) {
		t.Fatalf("fragment %q restores %+v (%v), want %+v", b.fragment, restored, err, a.State)
	}
}

// numberShown lists the forms of value an error may show: as typed
// (quoted), and the int or float it parses to.
func numberShown(value string) []string {
	out := []string{strconv.Quote(value)}
	if len(value) > 64 {
		// A long value is clipped in the message: its start shows, quoted.
		cut := 64
		for cut > 0 && !utf8.RuneStart(value[cut]) {
			cut--
		}
		q := strconv.Quote(value[:cut])
		out = append(out, q[:len(q)-1])
	}
	if n, err := strconv.Atoi(value); err == nil {
		out = append(out, strconv.Itoa(n))
	}
	if v, err := strconv.ParseFloat(value, 64); err == nil {
		out = append(out, strconv.FormatFloat(v, 'g', -1, 64))
	}
	return out
}

func FuzzSetPlanInput(f *testing.F) {
	for _, c := range [][2]string{
		{"model", "gpt3-175b"}, {"model", ""}, {"model", "hf"}, {"gpu", "nvidia-h100-sxm5-80gb"}, {"planner", "madpipe"}, {"planner", "magic"},
		{"nodes", "16"}, {"nodes", "-3"}, {"nodes", "99999999999999999999"}, {"gpus_per_node", "17"}, {"selected", "3"},
		{"custom.layers", "48"}, {"custom.hidden", "0"}, {"custom.heads", "1025"}, {"custom.layers", "A"}, {"seq", "4096"}, {"precision", "fp8"},
		{"optimizer", "sgd"}, {"optimizer", "adamw"}, {"zero", "3"}, {"zero", "4"}, {"zero", ""}, {"recompute", "full"},
		{"global_batch", "1048577"}, {"inter_node_gbps", "NaN"}, {"inter_node_gbps", "1e-300"}, {"inter_node_gbps", "Inf"},
		{"custom.kv_heads", "8"}, {"custom.kv_heads", "5"}, {"custom.gated_ffn", "true"}, {"custom.untied_embeddings", "yes"},
		{"custom.experts", "8"}, {"custom.experts", "-1"}, {"custom.topk", "2"}, {"custom.moe_ffn", "1408"}, {"custom.shared_experts", "2"},
		{"custom.sliding_window", "128"}, {"custom.sliding_layers", "24"}, {"custom.sliding_layers", "-1"}, {"custom.attention_sinks", "true"},
		{"mtp_layers", "1"}, {"mtp_layers", ""}, {"mtp_layers", "9"},
		{"hf_config", `{"architectures":["LlamaForCausalLM"]}`}, {"hf_config", ""}, {"tp", "8"}, {"cp", "-1"}, {"ep", "x"},
		{"flash_attention", "false"}, {"overlap_grad_reduce", ""}, {"tp_comm_overlap", "maybe"}, {"overlap_param_gather", "false"},
		{"cp_comm", "all_gather"}, {"cp_comm", "a2a+p2p"}, {"cp_comm", "ring"}, {"attention_kernel", "flash2"}, {"attention_kernel", "fa3"},
		{"ep_dispatcher", "deepep"}, {"ep_dispatcher", "nccl"}, {"overlap_ep_comm", "true"}, {"overlap_ep_comm", "1x"}, {"fp8_param_gather", "true"},
		// The form's former names are no inputs now (the request's are).
		{"custom_layers", "48"}, {"bogus", "1"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, field, value string) {
		a, b := setterApp()
		before := a.State
		a.SetPlanInput(field, value)
		// The error names the field as the request does (the form uses the
		// request's names) and shows the value; for a field the page does
		// not have (even ""), it says so.
		shown := numberShown(value)
		if strings.Contains(a.Err, "not an input") {
			shown = []string{"not an input of the Plan page"}
		}
		checkSetter(t, a, b, before, "plan."+field, shown...)
		if a.Err != "" {
			if !strings.HasPrefix(a.Err, "plan."+field+": ") {
				t.Fatalf("error %q does not start with plan.%s", a.Err, field)
			}
			return
		}
		// Setting the value again changes nothing (but Selected, reset to 0
		// by every input other than itself).
		again := a.State
		a.SetPlanInput(field, value)
		if a.Err != "" || !reflect.DeepEqual(a.State, again) {
			t.Fatalf("setting plan.%s = %q twice: %+v, then %+v (%q)", field, value, again.Plan, a.State.Plan, a.Err)
		}
	})
}

func FuzzSetClusterGPUs(f *testing.F) {
	for _, v := range []string{"1", "0", "-1", "4096", "4097", "", "x", "+2", "99999999999999999999"} {
		f.Add(uint8(0), v)
	}
	f.Add(uint8(1), "0")
	f.Fuzz(func(t *testing.T, i uint8, value string) {
		a, b := setterApp()
		before := a.State
		a.SetClusterGPUs(int(i)%len(a.State.Cluster.GPUs), value)
		checkSetter(t, a, b, before, "cluster.gpus", append(numberShown(value), "[0 0]")...)
	})
}

func FuzzSetJob(f *testing.F) {
	for _, c := range [][2]string{
		{"type", "A3C"}, {"type", ""}, {"type", strings.Repeat("x", 101)}, {"scale", "8"}, {"scale", "3"},
		{"weight", "0.5"}, {"weight", "0"}, {"weight", "NaN"}, {"weight", "101"}, {"steps", ""}, {"steps", "1e13"},
		{"steps", "-1"}, {"slo", "24"}, {"slo", "Inf"}, {"bogus", "1"}, {"type", "\xbd"},
	} {
		f.Add(uint8(0), c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, i uint8, field, value string) {
		a, b := setterApp()
		before := a.State
		a.SetJob(int(i)%len(a.State.Cluster.Jobs), field, value)
		checkSetter(t, a, b, before, "cluster.jobs", numberShown(value)...)
	})
}

func FuzzSetTrace(f *testing.F) {
	for _, c := range [][2]string{
		{"jobs", "100"}, {"jobs", "0"}, {"jobs", "2049"}, {"jobs", "x"}, {"rate", "4"}, {"rate", "0"}, {"rate", "1001"},
		{"rate", "NaN"}, {"rate", "1e-320"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, field, value string) {
		a, b := setterApp()
		before := a.State
		a.SetTrace(field, value)
		checkSetter(t, a, b, before, "cluster.trace", numberShown(value)...)
	})
}

func FuzzSetCost(f *testing.F) {
	for _, c := range []struct {
		which uint8
		field string
		value string
	}{
		{0, "", "2.5"}, {0, "", "0"}, {0, "", "1001"}, {0, "", "NaN"}, {0, "", "x"},
		{1, "work_hours", "10"}, {1, "work_hours", "0"}, {1, "deadline_hours", "0"}, {1, "deadline_hours", "-1"}, {1, "deadline_hours", "1e6"},
		{2, "", "gcp-on-demand"}, {2, "", "nonesuch"},
	} {
		f.Add(c.which, c.field, c.value)
	}
	f.Fuzz(func(t *testing.T, which uint8, field, value string) {
		a, b := setterApp()
		before := a.State
		switch which % 3 {
		case 0:
			a.SetCostPrice(int(which/3)%len(a.State.Cost.Prices), value)
			checkSetter(t, a, b, before, "cost.prices", numberShown(value)...)
		case 1:
			a.SetCostInput(field, value)
			checkSetter(t, a, b, before, "cost."+field, numberShown(value)...)
		case 2:
			a.SetCostPreset(value)
			checkSetter(t, a, b, before, "cost.preset", strconv.Quote(value))
			if a.Err == "" && a.State.Cost.Preset != value && a.State.Cost.Preset != "custom" {
				t.Fatalf("preset %q gives preset %q", value, a.State.Cost.Preset)
			}
		}
	})
}

// FuzzSetChoice covers the setters of a choice among names: the tab, the
// cluster's workload, policy and trace workload.
func FuzzSetChoice(f *testing.F) {
	for i, v := range []string{"cost", "job-types", "max_min_fairness_perf", "listed", "nonesuch", "", strings.Repeat("p", 65), "paper-3job", "\xbd", "\xbd\xbd"} {
		f.Add(uint8(i), v)
	}
	f.Fuzz(func(t *testing.T, which uint8, value string) {
		a, b := setterApp()
		before := a.State
		switch which % 4 {
		case 0:
			a.SetTab(value)
			checkSetter(t, a, b, before, "tab", strconv.Quote(value))
		case 1:
			a.SetClusterWorkload(value)
			checkSetter(t, a, b, before, "cluster.workload", strconv.Quote(value))
		case 2:
			a.SetClusterPolicy(value)
			checkSetter(t, a, b, before, "cluster.policy", strconv.Quote(value))
		case 3:
			a.SetTraceWorkload(value)
			checkSetter(t, a, b, before, "cluster.trace_workload", strconv.Quote(value))
		}
	})
}

func FuzzSetUploadMicrobatch(f *testing.F) {
	for _, v := range []string{"32", "1", "0", "-1", "x", "", "99999999999999999999"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, value string) {
		a, _ := setterApp()
		a.SetUploadMicrobatch(value)
		if a.Err != "" {
			if !strings.Contains(a.Err, "upload minibatch") || !strings.Contains(a.Err, strconv.Quote(value)) || a.UploadMicrobatch != 32 {
				t.Fatalf("SetUploadMicrobatch(%q): error %q, minibatch %d", value, a.Err, a.UploadMicrobatch)
			}
			return
		}
		if n, err := strconv.Atoi(value); err != nil || n < 1 || a.UploadMicrobatch != n {
			t.Fatalf("SetUploadMicrobatch(%q): minibatch %d", value, a.UploadMicrobatch)
		}
	})
}
