package engine

import (
	"fmt"

	"pipeplan/core/model"
)

// ModelPreset is one model the Plan page offers.
type ModelPreset struct {
	// ID is the stable id the URL state stores.
	ID string `json:"id"`
	// Name is the display name.
	Name string `json:"name"`
	// Transformer is the model's dimensions.
	Transformer model.Transformer `json:"transformer"`
}

// gpt is a GPT model of the dissertation's Table 4.1: sequence 2048,
// vocabulary 51200, mixed precision.
func gpt(name string, layers, hidden, heads int) model.Transformer {
	return model.Transformer{Name: name, Layers: layers, Hidden: hidden, Heads: heads, Seq: 2048, Vocab: 51200}
}

// bert is a BERT model (Devlin et al.): sequence 512, vocabulary 30522.
func bert(name string, layers, hidden, heads int) model.Transformer {
	return model.Transformer{Name: name, Layers: layers, Hidden: hidden, Heads: heads, Seq: 512, Vocab: 30522}
}

// presets are the transformer presets: GPT-3 175B (Table 4.2), the other
// GPT sizes of Table 4.1, and BERT.
var presets = []ModelPreset{
	{"gpt3-175b", "GPT-3 175B", gpt("GPT-3 175B", 96, 12288, 96)},
	{"gpt-1.7b", "GPT 1.7B", gpt("GPT 1.7B", 24, 2304, 24)},
	{"gpt-18.4b", "GPT 18.4B", gpt("GPT 18.4B", 40, 6144, 48)},
	{"gpt-39.1b", "GPT 39.1B", gpt("GPT 39.1B", 48, 8192, 64)},
	{"gpt-145.6b", "GPT 145.6B", gpt("GPT 145.6B", 80, 12288, 96)},
	{"gpt-310.1b", "GPT 310.1B", gpt("GPT 310.1B", 96, 16384, 128)},
	{"gpt-529.6b", "GPT 529.6B", gpt("GPT 529.6B", 105, 20480, 128)},
	{"gpt-1t", "GPT 1T", gpt("GPT 1T", 128, 25600, 160)},
	{"bert-large", "BERT-Large 340M", bert("BERT-Large", 24, 1024, 16)},
	{"bert-3.9b", "BERT 3.9B", bert("BERT 3.9B", 48, 2560, 40)},
}

// Models lists the model presets.
func Models() []ModelPreset {
	return append([]ModelPreset(nil), presets...)
}

// modelByID returns a preset or an error listing the known ids.
func modelByID(id string) (ModelPreset, error) {
	for _, m := range presets {
		if m.ID == id {
			return m, nil
		}
	}
	ids := make([]string, len(presets))
	for i, m := range presets {
		ids[i] = m.ID
	}
	return ModelPreset{}, fmt.Errorf("plan.model: unknown preset %q (known: %v)", id, ids)
}
