package model

import (
	"fmt"
	"strings"
)

// RecomputeModule is one submodule of a transformer layer that selective
// recomputation can rerun in the backward pass instead of keeping its
// activations, as Megatron-Core's --recompute-modules names them
// (megatron/core/transformer/transformer_config.py, recompute_modules).
type RecomputeModule uint8

// The modules, in Megatron-Core's order. Megatron-Core reruns core_attn,
// mlp, moe and shared_experts as checkpointed functions (their inputs
// kept) and drops the outputs of moe_act, layernorm and mla_up_proj
// ("output-discarding checkpointing"), rebuilt from their inputs.
const (
	// ModuleCoreAttn is the attention core (scores, softmax, attention
	// over V): selective recomputation's default.
	ModuleCoreAttn RecomputeModule = iota
	// ModuleMoEAct is the routed experts' activation function.
	ModuleMoEAct
	// ModuleLayerNorm is the two norms before the attention and the MLP.
	ModuleLayerNorm
	// ModuleMLAUpProj is multi-latent attention's up-projections of the
	// query and key/value latents (and RoPE).
	ModuleMLAUpProj
	// ModuleMLP is a dense layer's MLP.
	ModuleMLP
	// ModuleMoE is a mixture-of-experts layer's whole MLP block: routed
	// and shared experts, and the token exchange.
	ModuleMoE
	// ModuleSharedExperts is a mixture-of-experts layer's shared experts.
	ModuleSharedExperts
	moduleCount
)

// recomputeModuleNames are the modules' names, as Megatron-Core spells them.
var recomputeModuleNames = [moduleCount]string{"core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts"}

// String returns the module's Megatron-Core name.
func (m RecomputeModule) String() string { return recomputeModuleNames[m] }

// ModuleSet is a set of RecomputeModules. The zero set stands for
// selective recomputation's default, the attention core alone.
type ModuleSet uint8

// Has reports whether the set holds m; the zero set holds the attention
// core alone.
func (s ModuleSet) Has(m RecomputeModule) bool {
	if s == 0 {
		return m == ModuleCoreAttn
	}
	return s&(1<<m) != 0
}

// Names lists the set's modules' names in Megatron-Core's order.
func (s ModuleSet) Names() []string {
	var names []string
	for m := range moduleCount {
		if s.Has(m) {
			names = append(names, m.String())
		}
	}
	return names
}

// String lists the set's modules in Megatron-Core's order, comma-separated.
func (s ModuleSet) String() string { return strings.Join(s.Names(), ",") }

// ParseRecomputeModules parses a list of module names separated by commas
// or spaces ("moe_act,layernorm"); "" is the default set (the attention
// core). Unknown and repeated names are errors that name the value.
func ParseRecomputeModules(list string) (ModuleSet, error) {
	var s ModuleSet
	for _, name := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		m := RecomputeModule(0)
		for m < moduleCount && recomputeModuleNames[m] != name {
			m++
		}
		switch {
		case m == moduleCount:
			return 0, fmt.Errorf("recompute_modules: %q is not one of %s", name, strings.Join(recomputeModuleNames[:], ", "))
		case s&(1<<m) != 0:
			return 0, fmt.Errorf("recompute_modules: %q is named twice", name)
		}
		s |= 1 << m
	}
	return s, nil
}

// CheckRecomputeModules checks that every module of s exists in t: the
// routed experts' activation and the MoE block need a mixture of experts,
// shared_experts shared experts, mla_up_proj multi-latent attention.
func (t Transformer) CheckRecomputeModules(s ModuleSet) error {
	name := t.Name
	if name == "" {
		name = "the model"
	}
	for _, c := range []struct {
		m    RecomputeModule
		ok   bool
		what string
	}{
		{ModuleMoEAct, t.MoE != nil, "a mixture-of-experts model"},
		{ModuleMoE, t.MoE != nil, "a mixture-of-experts model"},
		{ModuleSharedExperts, t.MoE != nil && t.MoE.SharedExperts > 0, "shared experts"},
		{ModuleMLAUpProj, t.MLA != nil, "multi-latent attention"},
	} {
		if s != 0 && s.Has(c.m) && !c.ok {
			return fmt.Errorf("recompute_modules: %s needs %s, and %s has none", c.m, c.what, name)
		}
	}
	return nil
}

// MLAUpProjectionFLOPs returns the forward FLOPs of multi-latent
// attention's up-projections within ForwardGEMMs' GEMM gemm ("q" or "kv")
// for b sequences: the query latent's to the heads (none without a query
// latent) and the key/value latent's to the heads' keys and values; 0 for
// any other GEMM or without MLA.
func (t Transformer) MLAUpProjectionFLOPs(b int, gemm string) float64 {
	m := t.MLA
	if m == nil {
		return 0
	}
	tok, a := float64(b)*float64(t.Seq), float64(t.Heads)
	switch gemm {
	case "q":
		return 2 * tok * float64(m.QLoraRank) * a * float64(m.QKNopeHeadDim+m.QKRopeHeadDim)
	case "kv":
		return 2 * tok * float64(m.KVLoraRank) * a * float64(m.QKNopeHeadDim+m.VHeadDim)
	}
	return 0
}

// RecomputeFwdFLOPs returns the forward FLOPs selective recomputation with
// modules s reruns in layer i for b sequences: the attention core's, MLA's
// up-projections', a dense MLP's, a rerun MoE block's routed and shared
// experts', the shared experts'. Norms and activation functions count no
// FLOPs, as num_floating_point_operations counts none.
func (t Transformer) RecomputeFwdFLOPs(b, i int, s ModuleSet) float64 {
	var f float64
	if s.Has(ModuleCoreAttn) {
		f += t.LayerAttentionCoreFwdFLOPs(b, i)
	}
	for _, g := range t.ForwardGEMMs(b, i) {
		switch {
		case s.Has(ModuleMLAUpProj) && (g.Name == "q" || g.Name == "kv"):
			f += t.MLAUpProjectionFLOPs(b, g.Name)
		case s.Has(ModuleMLP) && (g.Name == "mlp-up" || g.Name == "mlp-down"),
			s.Has(ModuleMoE) && (g.Expert || g.Name == "shared-up" || g.Name == "shared-down"),
			s.Has(ModuleSharedExperts) && !s.Has(ModuleMoE) && (g.Name == "shared-up" || g.Name == "shared-down"):
			f += g.FLOPs
		}
	}
	return f
}
