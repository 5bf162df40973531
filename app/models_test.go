package app

import "testing"

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
