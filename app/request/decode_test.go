package request

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestDecodePlan(t *testing.T) {
	good, _ := json.Marshal(Default().Plan)
	if p, err := DecodePlan(good); err != nil || p.Shown() != DefaultTop {
		t.Fatalf("default inputs: %+v, %v", p, err)
	}
	for _, c := range []struct{ body, field, want string }{
		{`{"model":"gpt3-175b","bogus":1}`, "", "bogus"},
		{string(good) + `{}`, "", "trailing"},
		{strings.Replace(string(good), `"nodes":128`, `"nodes":-1`, 1), "plan.nodes", "got -1"},
		{`{"nodes":"8"}`, "plan.nodes", "must be a JSON int"},
		{`[]`, "", "JSON object"},
		{`null`, "", "JSON object"},
		{`{"inter_node_gbps":5e-324}`, "plan.inter_node_gbps", "got 5e-324"},
		{`{"tp":-1}`, "plan.tp", "got -1"},
		{`{"cp":-2}`, "plan.cp", "got -2"},
		{`{"ep":70000}`, "plan.ep", "got 70000"},
		{`{"flash_attention":"yes"}`, "plan.flash_attention", "must be a JSON bool"},
		{`{"model":"hf"}`, "plan.hf_config", `got 0 bytes for model "hf"`},
		{`{"hf_config":"{}"}`, "plan.hf_config", `got 2 bytes for model "gpt3-175b"`},
		{`{"model":"hf","hf_config":"` + strings.Repeat("x", MaxHFConfigBytes+1) + `"}`, "plan.hf_config", "got 32769"},
		{`{"top":-1}`, "plan.top", "got -1"},
		{`{"zero":4}`, "plan.zero", "must be in [0, 3], got 4"},
		{`{"recompute":"selective","recompute_layers":2}`, "plan.recompute_layers", `2 layers a chunk recompute only with recompute "full", got recompute "selective"`},
		{`{"recompute":"full","recompute_layers":-1}`, "plan.recompute_layers", "got -1"},
		{`{"recompute":"full","recompute_modules":"mlp"}`, "plan.recompute_modules", `"mlp" recompute only with recompute "selective", got recompute "full"`},
		{`{"recompute":"selective","recompute_modules":"mlp,attn"}`, "plan.recompute_modules", `"attn" is not one of core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts`},
		{`{"cp_comm":"allgather"}`, "plan.cp_comm", `must be one of "p2p", "all_gather", "a2a", got "allgather" (empty: searched per candidate)`},
		{`{"cp_comm":"a2a+p2p"}`, "plan.cp_comm", "hierarchical context parallelism \"a2a+p2p\" is not modelled yet"},
		{`{"cp_comm":2}`, "plan.cp_comm", "must be a JSON string"},
		{`{"attention_kernel":"flash3"}`, "plan.attention_kernel", `must be "cudnn" or "flash2", got "flash3" (empty: cudnn)`},
		{`{"zero":"1"}`, "plan.zero", "must be a JSON int"},
		{`{"mtp_layers":9}`, "plan.mtp_layers", "must be in [0, 8], got 9"},
		{`{"mtp_layers":-1}`, "plan.mtp_layers", "got -1"},
		{`{"overlap_grad_reduce":1}`, "plan.overlap_grad_reduce", "must be a JSON bool"},
		{`{"ep_dispatcher":"nccl"}`, "plan.ep_dispatcher", `got "nccl"`},
		{`{"ep_dispatcher":1}`, "plan.ep_dispatcher", "must be a JSON string"},
		{`{"overlap_ep_comm":"yes"}`, "plan.overlap_ep_comm", "must be a JSON bool"},
		{`{"fp8_param_gather":0}`, "plan.fp8_param_gather", "must be a JSON bool"},
		{`{"custom":{"layers":2,"hidden":64,"heads":12,"kv_heads":5}}`, "plan.custom.kv_heads", "must divide the 12 attention heads, got 5"},
		{`{"custom":{"layers":2,"hidden":64,"heads":12,"kv_heads":24}}`, "plan.custom.kv_heads", "must be in [0, 12], got 24"},
		{`{"custom":{"layers":2,"hidden":64,"heads":4,"topk":2}}`, "plan.custom.topk", "needs plan.custom.experts"},
		{`{"custom":{"layers":2,"hidden":64,"heads":4,"shared_experts":1}}`, "plan.custom.shared_experts", "got 1 with no experts"},
		{`{"custom":{"layers":2,"hidden":64,"heads":4,"moe_ffn":128}}`, "plan.custom.moe_ffn", "needs plan.custom.experts"},
		{`{"custom":{"layers":2,"hidden":64,"heads":4,"sliding_window":128,"sliding_layers":3}}`, "plan.custom.sliding_layers", "must be in [0, 2], got 3"},
		{`{"custom":{"layers":2,"hidden":64,"heads":4,"sliding_layers":1}}`, "plan.custom.sliding_layers", "both or neither"},
		{`{"custom":{"layers":2,"hidden":64,"heads":4,"experts":8,"topk":9}}`, "plan.custom.topk", "must be in [1, 8], got 9"},
		{`{"custom":{"layers":2,"hidden":64,"heads":4,"group_topk":2}}`, "plan.custom.group_topk", "needs plan.custom.experts"},
		{`{"custom":{"layers":2,"hidden":64,"heads":4,"experts":8,"topk":2,"expert_groups":3,"group_topk":1}}`, "plan.custom.expert_groups", "must divide the 8 experts into at least 2 groups"},
		{`{"custom":{"layers":2,"hidden":64,"heads":4,"experts":8,"topk":2,"expert_groups":4}}`, "plan.custom.group_topk", "must be in [1, plan.custom.expert_groups 4] with groups, got 0"},
		{`{"custom":{"layers":2,"hidden":64,"heads":4,"experts":8,"topk":4,"expert_groups":4,"group_topk":1}}`, "plan.custom.group_topk", "1 groups of 2 experts cannot hold plan.custom.topk 4"},
		{`{"custom":{"layers":2,"hidden":64,"heads":4,"experts":8}}`, "plan.custom.topk", "must be in [1, 8], got 0"},
		{`{"custom":{"layers":2,"hidden":64,"heads":4,"experts":2000,"topk":1}}`, "plan.custom.experts", "got 2000"},
		{`{"custom":{"layers":2,"hidden":64,"heads":4,"experts":8,"topk":2,"moe_ffn":-1}}`, "plan.custom.moe_ffn", "got -1"},
		{`{"custom":{"name":"` + strings.Repeat("x", 300) + `"}}`, "plan.custom.name", "got 300"},
		{`{"` + strings.Repeat("x", 5000) + `":1}`, "", "…"},
		{strings.Repeat(" ", MaxBodyBytes+1), "", "limit"},
	} {
		_, err := DecodePlan([]byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) || Field(err) != c.field || len(err.Error()) > 2*maxMessageBytes {
			t.Errorf("DecodePlan(%.40q) = %v (field %q), want an error containing %q naming field %q", c.body, err, Field(err), c.want, c.field)
		}
	}
}

// TestDecodePlanArchitectureAndExecution: the architecture and overlap
// fields decode into the plan; zero, absent or null, is searched (nil),
// and a given stage 0 is pinned, not searched.
func TestDecodePlanArchitectureAndExecution(t *testing.T) {
	p, err := DecodePlan([]byte(`{"model":"custom","custom":{"layers":4,"hidden":256,"heads":8,"kv_heads":2,"gated_ffn":true,
		"untied_embeddings":true,"experts":16,"topk":2,"moe_ffn":128,"shared_experts":1},"zero":0,"overlap_grad_reduce":false,"tp_comm_overlap":true,
		"cp_comm":"a2a"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := CustomModel{Layers: 4, Hidden: 256, Heads: 8, KVHeads: 2, GatedFFN: true, UntiedEmbeddings: true, Experts: 16, TopK: 2, MoEFFN: 128, SharedExperts: 1}
	if p.Custom != want || p.ZeRO == nil || *p.ZeRO != 0 || p.OverlapGradReduce == nil || *p.OverlapGradReduce ||
		p.TPCommOverlap == nil || !*p.TPCommOverlap || p.OverlapParamGather != nil || p.CPComm != "a2a" {
		t.Errorf("decoded %+v", p)
	}
	for _, body := range []string{`{}`, `{"zero":null}`} {
		if p, err := DecodePlan([]byte(body)); err != nil || p.ZeRO != nil {
			t.Errorf("DecodePlan(%s): zero %v, %v; want searched (nil)", body, p.ZeRO, err)
		}
	}
}

func TestDecodeAllocate(t *testing.T) {
	a, err := DecodeAllocate([]byte(`{"instance": {"worker_types": ["v100"]}, "policy": "fifo", "entity_policies": {"b": "fifo", "a": "fairness"}}`))
	if err != nil || a.Policy != "fifo" || strings.Join(a.Entities(), ",") != "a,b" {
		t.Fatalf("DecodeAllocate = %+v, %v", a, err)
	}
	for _, c := range []struct{ body, field string }{
		{`{"policy": "fifo"}`, "instance"},
		{`{"instance": null, "policy": "fifo"}`, "instance"},
		{`{"instance": {}, "policy": ""}`, "policy"},
		{`{"instance": {}, "policy": "fifo", "budget_dollars": -1}`, "budget_dollars"},
		{`{"instance": {}, "policy": "fifo", "entity_policies": {"a": ""}}`, "entity_policies"},
		{`{"instance": {}, "policy": 3}`, "policy"},
	} {
		if _, err := DecodeAllocate([]byte(c.body)); err == nil || Field(err) != c.field {
			t.Errorf("DecodeAllocate(%s) = %v, want an error naming %q", c.body, err, c.field)
		}
	}
}

// FuzzDecodePlan: a decoded plan request is always valid, and a rejected
// one names a field the request has (or none, for a malformed body).
func FuzzDecodePlan(f *testing.F) {
	good, _ := json.Marshal(Default().Plan)
	for _, s := range []string{string(good), `{"nodes":1e400}`, `{"inter_node_gbps":NaN}`, `null`, `{"custom":{"layers":"x"}}`,
		`{"tp":8,"pp":12,"microbatch":1,"interleave":2,"recompute":"full"}`,
		`{"cp":16,"cp_comm":"all_gather"}`, `{"cp_comm":"ring"}`, `{"ep":8,"ep_dispatcher":"deepep","overlap_ep_comm":true}`, `{"model":"qwen3-235b-a22b","tp":4,"ep":8,"etp":4}`, `{"etp":-1}`,
		`{"ep_dispatcher":"DeepEP"}`, `{"precision":"fp8","fp8_param_gather":true}`, `{"model":"deepseek-v3","mtp_layers":2}`, `{"mtp_layers":null}`,
		`{"recompute":"full","recompute_layers":4}`, `{"schedule":"zb-h1","pp":8}`, `{"schedule":"zb-v"}`, `{"recompute":"selective","recompute_modules":"mla_up_proj,moe_act"}`, `{"recompute_modules":"mlp"}`,
		// the worst cases (BENCHMARKS.md, "Worst cases")
		`{"model":"pd-gnmt_large","cost_model":"pipedream","levels":[{"workers":4,"bandwidth_bytes_per_sec":1e11},{"workers":4,"bandwidth_bytes_per_sec":1e10},{"workers":4,"bandwidth_bytes_per_sec":1e9}]}`,
		`{"model":"pd-resnet50","nodes":31,"gpus_per_node":1,"planner":"madpipe"}`,
		`{"model":"llama3-405b","nodes":4095,"gpus_per_node":16,"global_batch":720720,"allow_cross_node_tp":true}`,
		`{"model":"llama3-405b","gpu":"nvidia-gb200-gpu","nodes":910,"gpus_per_node":72,"global_batch":720720}`, `{"nodes":911,"gpus_per_node":72}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		p, err := DecodePlan([]byte(body))
		if err != nil {
			if fe := Field(err); fe != "" && !strings.HasPrefix(fe, "plan.") {
				t.Fatalf("error %v names field %q outside plan", err, fe)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("accepted an invalid request: %v", err)
		}
	})
}

// FuzzDecodeAllocate: a decoded allocate request is always valid.
func FuzzDecodeAllocate(f *testing.F) {
	for _, s := range []string{`{"instance": {}, "policy": "fifo"}`, `{"instance": 1, "policy": "x", "prices_per_hour": [1e400]}`,
		`{"instance": [], "policy": "fifo", "entity_policies": {"": "x"}}`, `{}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		a, err := DecodeAllocate([]byte(body))
		if err != nil {
			return
		}
		if err := a.Validate(); err != nil {
			t.Fatalf("accepted an invalid request: %v", err)
		}
	})
}

// TestPlanLLMFields checks the LLM fields' defaults and round trip: flash
// attention on and the GPU's own network (0) by default; flash attention
// off, cp, ep and a Hugging Face config survive a shared link.
func TestPlanLLMFields(t *testing.T) {
	d := Default().Plan
	if !d.FlashAttention || d.InterNodeGBps != 0 || d.CP != 0 || d.EP != 0 || d.Validate() != nil {
		t.Fatalf("defaults: %+v", d)
	}
	s := Default()
	s.Plan.FlashAttention, s.Plan.CP, s.Plan.EP = false, 2, 8
	s.Plan.Model, s.Plan.HFConfig = HFModel, `{"model_type": "llama"}`
	frag, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(frag)
	if err != nil || !reflect.DeepEqual(got.Plan, s.Plan) {
		t.Errorf("round trip: %+v, %v; want %+v", got.Plan, err, s.Plan)
	}
}
