package app

import (
	"errors"
	"strings"
	"testing"

	"pipeplan/app/request"
)

// TestLLMPresets checks that the LLM presets of modelprofiles are offered
// by id, with their architecture (Llama 3.1 405B: 126 layers, 8 K/V heads).
func TestLLMPresets(t *testing.T) {
	m, err := modelByID("llama3-405b")
	if err != nil {
		t.Fatal(err)
	}
	if tr := m.Transformer; tr == nil || tr.Layers != 126 || tr.KVHeads != 8 || !tr.GatedFFN {
		t.Fatalf("llama3-405b: got %+v, want 126 layers, 8 K/V heads, gated MLP", m.Transformer)
	}
	seen := map[string]bool{}
	for _, p := range Models() {
		if seen[p.ID] {
			t.Errorf("preset id %q listed twice", p.ID)
		}
		seen[p.ID] = true
	}
	for _, id := range []string{"gpt3-175b", "llama3-8b", "mixtral-8x7b", "deepseek-v3", "pd-vgg16", customID} {
		if !seen[id] {
			t.Errorf("Models() lacks %q", id)
		}
	}
}

// TestModelLimits: a Hugging Face config.json is held to the limits of a
// custom model, so a link cannot ask the search for a 100,000-layer model;
// the error names the field and the numbers.
func TestModelLimits(t *testing.T) {
	p := request.Default().Plan
	p.Model = request.HFModel
	p.HFConfig = `{"model_type": "llama", "num_hidden_layers": 100000, "hidden_size": 4096, "num_attention_heads": 32,
		"num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 8192}`
	_, err := modelFor(p)
	var fe *request.FieldError
	if !errors.As(err, &fe) || fe.Field != "plan.hf_config" || !strings.Contains(err.Error(), "layers 100000 is over the planner's limit of 256") {
		t.Fatalf("err = %v, want plan.hf_config naming 100000 layers and the limit", err)
	}
	p.HFConfig = strings.Replace(p.HFConfig, "100000", "32", 1)
	if m, err := modelFor(p); err != nil || m.Transformer.Layers != 32 {
		t.Fatalf("a Llama 3 8B-like config: %+v, %v", m, err)
	}
}
