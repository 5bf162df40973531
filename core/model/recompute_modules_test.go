package model

import (
	"math"
	"strings"
	"testing"
)

// deepseekLike is a small DeepSeek-V3-shaped model: MLA with a query
// latent, a dense first layer, routed experts with a shared one.
var deepseekLike = Transformer{Layers: 4, Hidden: 1024, Heads: 16, Seq: 4096, Vocab: 32000, FFN: 2816,
	GatedFFN: true, UntiedEmbeddings: true, PositionEmbedding: PositionNone, Norm: NormRMS, Bias: BiasNone, NoDropout: true,
	MoE: &MoE{Experts: 64, TopK: 6, FFN: 352, SharedExperts: 1, FirstDense: 1},
	MLA: &MLA{QLoraRank: 384, KVLoraRank: 128, QKRopeHeadDim: 16, QKNopeHeadDim: 32, VHeadDim: 32}}

func TestParseRecomputeModules(t *testing.T) {
	s, err := ParseRecomputeModules("layernorm, moe_act")
	if err != nil || s.String() != "moe_act,layernorm" || s.Has(ModuleCoreAttn) || !s.Has(ModuleMoEAct) {
		t.Errorf("layernorm, moe_act: %v %q (error %v)", s, s.String(), err)
	}
	if s, err := ParseRecomputeModules(""); err != nil || s != 0 || !s.Has(ModuleCoreAttn) || s.Has(ModuleMoEAct) || s.String() != "core_attn" {
		t.Errorf(`"": %v %q (error %v), want the default set, the attention core`, s, s.String(), err)
	}
	for list, want := range map[string]string{
		"moe_act,attn":      `recompute_modules: "attn" is not one of core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts`,
		"mlp mlp":           `recompute_modules: "mlp" is named twice`,
		"layernorm,,moe_ac": `recompute_modules: "moe_ac" is not one of`,
	} {
		if _, err := ParseRecomputeModules(list); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", list, err, want)
		}
	}
	moeAct, _ := ParseRecomputeModules("moe_act")
	mla, _ := ParseRecomputeModules("mla_up_proj")
	shared, _ := ParseRecomputeModules("shared_experts")
	dense := gpt(8, 1024, 16)
	for _, c := range []struct {
		tr   Transformer
		s    ModuleSet
		want string
	}{
		{dense, moeAct, "recompute_modules: moe_act needs a mixture-of-experts model"},
		{dense, mla, "recompute_modules: mla_up_proj needs multi-latent attention"},
		{mixtral8x7b, shared, "recompute_modules: shared_experts needs shared experts"},
	} {
		if err := c.tr.CheckRecomputeModules(c.s); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.s, err, c.want)
		}
	}
	if err := deepseekLike.CheckRecomputeModules(moeAct | mla | shared); err != nil {
		t.Errorf("a DeepSeek-like model refuses moe_act, mla_up_proj and shared_experts: %v", err)
	}
}

// TestRecomputeModulesActivationBytes checks what each module of selective
// recomputation drops from a layer's activations against the tensors it
// rebuilds, sized from the dimensions (bf16, tensor parallelism 2 with
// sequence parallelism, flash attention, microbatch 1): the norms' two
// outputs; MLA's Q, K (heads × (nope + rope)) and V (heads × v); a dense
// gated MLP's gate, up and product; the routed experts' products (topk
// per token) or all their inputs and intermediates; the shared expert's
// intermediates; the attention core's softmax statistics. The zero set is
// the attention core's, and the modules' drops add up.
func TestRecomputeModulesActivationBytes(t *testing.T) {
	tr := deepseekLike
	const b, tp = 1, 2
	s, h := float64(tr.Seq), float64(tr.Hidden)
	a, m, l := float64(tr.Heads), tr.MLA, tr.MoE
	qk, v := float64(m.QKNopeHeadDim+m.QKRopeHeadDim), float64(m.VHeadDim)
	fe, f := float64(l.FFN), float64(tr.FFN)
	none := ActivationOptions{TP: tp, SequenceParallel: true, FlashAttention: true}
	dropped := func(i int, list string) float64 {
		set, err := ParseRecomputeModules(list)
		if err != nil {
			t.Fatal(err)
		}
		o := none
		o.Recompute, o.Modules = RecomputeSelective, set
		return tr.LayerActivationBytesAt(b, i, none) - tr.LayerActivationBytesAt(b, i, o)
	}
	const dense, moe = 0, 1 // layer 0 is dense (FirstDense 1)
	for _, c := range []struct {
		list  string
		layer int
		want  float64
	}{
		{"core_attn", moe, 4 * a * s / tp},                // fp32 softmax statistics per head and token
		{"", moe, 4 * a * s / tp},                         // the default set
		{"layernorm", moe, 2 * 2 * s * h / tp},            // two bf16 outputs, sequence-sharded
		{"mla_up_proj", moe, 2 * s * a * (2*qk + v) / tp}, // Q, K, V in bf16
		{"mlp", dense, 2 * 3 * s * f / tp},                // gate, up, product
		{"moe_act", moe, 2 * 6 * s * fe / tp},             // the topk products
		{"shared_experts", moe, 2 * 3 * s * fe / tp},      // one shared expert's gate, up, product
		{"moe", moe, 2*6*s*(h+3*fe)/tp + 2*3*s*fe/tp},     // routed inputs and intermediates, and the shared
		{"mlp", moe, 0}, // a MoE layer has no dense MLP
		{"moe_act", dense, 0},
	} {
		if got := dropped(c.layer, c.list); math.Abs(got-c.want) > 1e-9*c.want+1e-9 {
			t.Errorf("%q on layer %d drops %.6g bytes, want %.6g", c.list, c.layer, got, c.want)
		}
	}
	sum := dropped(moe, "core_attn") + dropped(moe, "layernorm") + dropped(moe, "mla_up_proj") + dropped(moe, "moe_act") + dropped(moe, "shared_experts")
	if all := dropped(moe, "core_attn,layernorm,mla_up_proj,moe_act,shared_experts"); math.Abs(all-sum) > 1e-9*sum {
		t.Errorf("five modules drop %.6g bytes together, %.6g one by one", all, sum)
	}
	if moe, parts := dropped(moe, "moe,moe_act,shared_experts"), dropped(moe, "moe"); moe != parts {
		t.Errorf("moe with moe_act and shared_experts drops %.6g bytes, moe alone %.6g: moe holds both", moe, parts)
	}
}
