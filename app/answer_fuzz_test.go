package app

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"pipeplan/app/request"
	"pipeplan/core/gavel"
	"pipeplan/core/plan"
)

// The request decoders (URL fragment, /api/plan and the JS API) fuzzed
// through to an answer: whatever a decoder accepts, the app answers with a
// result or an error that says something, within a bound.

// answerDeadline bounds one answer. It catches unbounded work (a request
// whose planner runs for minutes), not slowness: the heaviest accepted
// seed answers in 0.6 s alone but took over 10 s with the machine's load
// average at 40 (2 cores), so the bound is 60 s; the product's ~10 s bound
// is measured in benchmarks (BENCHMARKS.md), not here. Reaching it means
// the request asks for unbounded work: its cap belongs in the request's
// validation.
const answerDeadline = 60 * time.Second

// maxAnswerJSON bounds an answer's JSON encoding (a timeline SVG, tables).
const maxAnswerJSON = 8 << 20

// maxFuzzSimJobs caps the simulated trace of a fuzzed request: a trace of
// request.MaxTraceJobs jobs is bounded but takes longer than a fuzz input
// should (the page runs it in the background with progress and cancel).
const maxFuzzSimJobs = 12

// maxFuzzProfileGPUs caps the cluster of a fuzzed layer-profile request
// (and of a planned job's). MaxProfileGPUs bounds what users ask, but
// PipeDream's DP and MadPipe on a deep profile take seconds at that size,
// too long per fuzz input on a loaded machine.
const maxFuzzProfileGPUs = 8

// capProfile shrinks p's cluster to maxFuzzProfileGPUs when it names a
// layer profile.
func capProfile(p *request.Plan) {
	if m, err := modelByID(p.Model); err != nil || m.Profile == "" {
		return
	}
	p.GPUsPerNode = min(p.GPUsPerNode, maxFuzzProfileGPUs)
	p.Nodes = min(p.Nodes, maxFuzzProfileGPUs/p.GPUsPerNode)
}

// capFuzzRequest applies the fuzz caps to a decoded state.
func capFuzzRequest(s *request.State) {
	capProfile(&s.Plan)
	s.Cluster.Jobs = append([]request.Job(nil), s.Cluster.Jobs...)
	for i, j := range s.Cluster.Jobs {
		if j.Planned != nil {
			p := *j.Planned
			capProfile(&p)
			s.Cluster.Jobs[i].Planned = &p
		}
	}
	s.Cluster.TraceJobs = min(s.Cluster.TraceJobs, maxFuzzSimJobs)
}

// answer runs one app call on request what under answerDeadline and checks
// it ends in time, with an answer that encodes as bounded JSON or an error
// with a message.
func answer[T any](t *testing.T, what string, call func(ctx context.Context) (T, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), answerDeadline)
	defer cancel()
	res, err := call(ctx)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		t.Fatalf("%s: an accepted request takes over %v (%v)", what, answerDeadline, err)
	case err != nil && err.Error() == "":
		t.Fatalf("%s: an error without a message", what)
	case err != nil:
		return
	}
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatalf("%s: the answer does not encode as JSON: %v", what, err)
	}
	if len(data) > maxAnswerJSON {
		t.Fatalf("%s: an answer of %d bytes of JSON", what, len(data))
	}
}

// checkPlanResult checks the documented shape of a Plan answer.
func checkPlanResult(t *testing.T, res Result) {
	t.Helper()
	if len(res.Candidates) > MaxShownCandidates || len(res.Infeasible) > MaxShownInfeasible {
		t.Fatalf("%d candidates and %d infeasible shown, over the display limits", len(res.Candidates), len(res.Infeasible))
	}
	for _, c := range res.Infeasible {
		if c.Fits && c.Reason == "" {
			t.Fatalf("%s %+v listed as ruled out, yet it fits and no reason is given", c.Planner, c.Execution)
		}
	}
	for _, c := range res.Candidates {
		if !c.Fits || c.Reason != "" {
			t.Fatalf("%s %+v ranked, yet ruled out: %s", c.Planner, c.Execution, c.Reason)
		}
	}
	if res.Plan != nil && (res.Selected < 0 || res.Selected >= len(res.Candidates)) {
		t.Fatalf("selected %d of %d candidates", res.Selected, len(res.Candidates))
	}
	if res.Plan == nil && res.Problem == "" && res.NoExport == "" && res.MadPipe == nil && len(res.Candidates) == 0 {
		t.Fatalf("no plan, no candidates and no problem stated")
	}
}

// stateSeeds are fragment states (their JSON) covering the three pages'
// inputs: the defaults, each planner, profiles, planned and listed jobs.
func stateSeeds(f *testing.F) [][]byte {
	var out [][]byte
	add := func(s request.State) {
		data, err := json.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, data)
	}
	s := request.Default()
	add(s)
	for _, m := range []struct{ model, planner string }{{"pd-vgg16", "best"}, {"pd-resnet50", "madpipe"}, {"pd-gnmt", "2bw"}, {"custom", "ptdp"}, {"custom", "2bw"}, {"bert-large", "pipedream"}} {
		s := request.Default()
		s.Plan.Model, s.Plan.Planner, s.Plan.Nodes = m.model, m.planner, 2
		add(s)
	}
	s = request.Default()
	mtp := 2
	s.Plan.Model, s.Plan.Nodes, s.Plan.GlobalBatch, s.Plan.MTPLayers = "deepseek-v3", 32, 512, &mtp
	add(s)
	s = request.Default()
	s.Tab, s.Cluster.Workload, s.Cluster.GPUs = "cost", request.WorkloadJobTypes, []int{8, 8, 8}
	s.Cluster.Policy, s.Cluster.PlacementSensitive, s.Cluster.TraceWorkload = "max_min_fairness_packed", true, request.TraceListedJobs
	planned := request.Default().Plan
	planned.Model, planned.Nodes, planned.GlobalBatch = "gpt-1.7b", 1, 64
	s.Cluster.Jobs = append(s.Cluster.Jobs, request.Job{Type: "planned: GPT 1.7B", Scale: 8, Weight: 2, Steps: 1000, SLOHours: 2.5, Planned: &planned})
	add(s)
	// Past request.MaxPlannedRuns (BENCHMARKS.md, "Worst cases"): 64
	// planned jobs, each planned on every GPU type and placement.
	for len(s.Cluster.Jobs) < request.MaxJobs {
		s.Cluster.Jobs = append(s.Cluster.Jobs, s.Cluster.Jobs[len(s.Cluster.Jobs)-1])
	}
	add(s)
	return append(out, []byte(`{"plan":{"nodes":4096,"gpus_per_node":16,"global_batch":1048576}}`), []byte(`{"tab":"cluster","cluster":{"policy":"nonesuch"}}`))
}

// FuzzFragmentAnswer fuzzes the URL fragment decoder through to the
// answers of the three pages: the input is the fragment's state as JSON,
// encoded with the fragment codec, so mutations reach the decoder's
// validation and the app rather than the compression.
func FuzzFragmentAnswer(f *testing.F) {
	for _, s := range stateSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stateJSON []byte) {
		frag, err := plan.EncodeFragment(json.RawMessage(stateJSON))
		if err != nil {
			return
		}
		s, err := request.Decode(frag)
		if err != nil {
			return
		}
		capFuzzRequest(&s)
		answer(t, "plan", func(ctx context.Context) (Result, error) {
			res, err := Plan(ctx, s.Plan)
			if err == nil {
				checkPlanResult(t, res)
			}
			return res, err
		})
		answer(t, "allocate", func(ctx context.Context) (ClusterResult, error) { return Allocate(ctx, s.Cluster) })
		answer(t, "cost", func(ctx context.Context) (CostResult, error) { return Cost(ctx, s.Cluster, s.Cost) })
		answer(t, "simulate", func(ctx context.Context) (*gavel.SimResult, error) { return SimulateTrace(ctx, s.Cluster, nil, nil) })
	})
}

// FuzzPlanJSON fuzzes the JSON request of POST /api/plan and the JS API's
// pipeplan.plan through to the planner's answer.
func FuzzPlanJSON(f *testing.F) {
	for _, s := range stateSeeds(f) {
		var st struct {
			Plan json.RawMessage `json:"plan"`
		}
		if json.Unmarshal(s, &st) == nil && st.Plan != nil {
			f.Add(string(st.Plan))
		}
	}
	f.Add(`{"model":"pd-gnmt_large","planner":"madpipe","nodes":64,"gpus_per_node":16}`)
	f.Add(`{"model":"pd-resnet101","planner":"best","nodes":1,"gpus_per_node":3}`)
	// the worst cases of BENCHMARKS.md, "Worst cases" (profiles capped by capProfile)
	f.Add(`{"model":"pd-resnet50","planner":"madpipe","nodes":31,"gpus_per_node":1}`)
	f.Add(`{"model":"pd-gnmt_large","cost_model":"pipedream","nodes":2,"gpus_per_node":8}`)
	f.Add(`{"model":"llama3-405b","nodes":4095,"gpus_per_node":16,"global_batch":720720,"allow_cross_node_tp":true}`)
	f.Add(`{"model":"custom","custom":{"layers":256,"hidden":131072,"heads":1024},"seq":1048576}`)
	f.Add(`{"model":"custom","custom":{"layers":8,"hidden":1024,"heads":16,"kv_heads":4,"gated_ffn":true,"experts":8,"topk":2,"moe_ffn":512,"shared_experts":1},"nodes":2,"zero":null,"overlap_grad_reduce":false,"tp_comm_overlap":true}`)
	f.Add(`{"model":"custom","custom":{"layers":4,"hidden":512,"heads":8,"experts":16,"topk":2},"gpu":"nvidia-h100-sxm5-80gb","nodes":2,"global_batch":32,"ep":16,"ep_dispatcher":"deepep","overlap_ep_comm":true}`)
	f.Add(`{"model":"gpt3-175b","ep_dispatcher":"deepep","overlap_ep_comm":true}`)
	f.Add(`{"model":"llama3-8b","gpu":"nvidia-h100-sxm5-80gb","nodes":1,"global_batch":64,"precision":"fp8","fp8_param_gather":true}`)
	f.Fuzz(func(t *testing.T, body string) {
		p, err := request.DecodePlan([]byte(body))
		if err != nil {
			return
		}
		capProfile(&p)
		capped, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("an accepted request does not encode: %v", err)
		}
		answer(t, "plan", func(ctx context.Context) (json.RawMessage, error) {
			out, err := PlanJSON(ctx, capped)
			if err != nil {
				return nil, err
			}
			var res Result
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("PlanJSON's answer does not decode: %v", err)
			}
			checkPlanResult(t, res)
			return out, nil
		})
	})
}

// FuzzAllocateJSON fuzzes the JS API's pipeplan.allocate (an LP instance
// and a policy name, as request.DecodeAllocate reads them) through to the
// allocation. The JS API takes instances
// of any size by design (a script's own work, in its own tab), so the
// fuzzer caps the instance instead.
func FuzzAllocateJSON(f *testing.F) {
	small := `{"worker_types":["v100","k80"],"num_workers":[1,1],"jobs":[{"id":0,"scale_factor":1,"num_steps":100},{"id":1,"scale_factor":1,"num_steps":50,"priority_weight":3}],"throughputs":[[40,10],[12,4]],"price_per_hour":[3,1]}`
	for _, p := range gavel.PolicyNames() {
		f.Add(small, p)
	}
	f.Add(small, "nonesuch")
	f.Add(`{"worker_types":["v100"],"num_workers":[0],"jobs":[],"throughputs":[]}`, "max_min_fairness")
	f.Fuzz(func(t *testing.T, instanceJSON, policy string) {
		inst, err := gavel.ParseInstance([]byte(instanceJSON))
		if err != nil || len(inst.Jobs) > 8 || len(inst.WorkerTypes) > 4 {
			return
		}
		answer(t, "allocate", func(ctx context.Context) (json.RawMessage, error) {
			body, err := json.Marshal(map[string]any{"instance": json.RawMessage(instanceJSON), "policy": policy})
			if err != nil {
				return nil, nil // not the JS API's input: a string JSON cannot carry
			}
			req, err := request.DecodeAllocate(body)
			if err != nil {
				return nil, err
			}
			al, err := AllocateInstance(ctx, req)
			if err != nil {
				return nil, err
			}
			out, err := json.Marshal(al)
			if err != nil {
				t.Fatalf("AllocateInstance's answer does not encode: %v", err)
			}
			return out, nil
		})
	})
}

// TestProfilePlannersCapGPUs: a layer-profile request over MaxProfileGPUs is
// an error naming the field and the values, not minutes of planning.
func TestProfilePlannersCapGPUs(t *testing.T) {
	p := request.Default().Plan
	p.Model, p.Nodes, p.GPUsPerNode = "pd-resnet101", 4096, 16
	_, err := Plan(context.Background(), p)
	if err == nil || !strings.Contains(err.Error(), "plan.nodes") || !strings.Contains(err.Error(), "4096 nodes × 16 GPUs") {
		t.Fatalf("pd-resnet101 on 65,536 GPUs: err = %v, want one naming plan.nodes and the sizes", err)
	}
	prof, err := ParseUploadedProfile("up.json", []byte(`{"microbatch_size": 1, "layers": [{"fwd_seconds": 0.1, "bwd_seconds": 0.2, "output_activation_bytes": 10, "parameter_bytes": 5}]}`), 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PlanProfile(context.Background(), prof, p, nil); err == nil || !strings.Contains(err.Error(), "plan.nodes") {
		t.Fatalf("an uploaded profile on 65,536 GPUs: err = %v, want one naming plan.nodes", err)
	}
}
