package app

import (
	"fmt"

	"pipeplan/app/request"
	"pipeplan/core/model"
	"pipeplan/modelprofiles"
)

// ModelPreset is one model the Plan page offers.
type ModelPreset struct {
	// ID is the stable id the URL state stores.
	ID string `json:"id"`
	// Name is the display name.
	Name string `json:"name"`
	// Transformer is the model's dimensions (transformer presets).
	Transformer *model.Transformer `json:"transformer,omitempty"`
	// Profile names an embedded PipeDream profile (modelprofiles) instead.
	Profile string `json:"profile,omitempty"`
}

// customID is the preset whose dimensions come from the request.
const customID = "custom"

// gpt is a GPT model of the dissertation's Table 4.1: sequence 2048,
// vocabulary 51200, mixed precision.
func gpt(name string, layers, hidden, heads int) *model.Transformer {
	return &model.Transformer{Name: name, Layers: layers, Hidden: hidden, Heads: heads, Seq: 2048, Vocab: 51200}
}

// bert is a BERT model (Devlin et al.): sequence 512, vocabulary 30522.
func bert(name string, layers, hidden, heads int) *model.Transformer {
	return &model.Transformer{Name: name, Layers: layers, Hidden: hidden, Heads: heads, Seq: 512, Vocab: 30522}
}

// presets are the transformer presets: GPT-3 175B (Table 4.2), the other
// GPT sizes of Table 4.1, and BERT.
var presets = []ModelPreset{
	{ID: "gpt3-175b", Name: "GPT-3 175B", Transformer: gpt("GPT-3 175B", 96, 12288, 96)},
	{ID: "gpt-1.7b", Name: "GPT 1.7B", Transformer: gpt("GPT 1.7B", 24, 2304, 24)},
	{ID: "gpt-18.4b", Name: "GPT 18.4B", Transformer: gpt("GPT 18.4B", 40, 6144, 48)},
	{ID: "gpt-39.1b", Name: "GPT 39.1B", Transformer: gpt("GPT 39.1B", 48, 8192, 64)},
	{ID: "gpt-145.6b", Name: "GPT 145.6B", Transformer: gpt("GPT 145.6B", 80, 12288, 96)},
	{ID: "gpt-310.1b", Name: "GPT 310.1B", Transformer: gpt("GPT 310.1B", 96, 16384, 128)},
	{ID: "gpt-529.6b", Name: "GPT 529.6B", Transformer: gpt("GPT 529.6B", 105, 20480, 128)},
	{ID: "gpt-1t", Name: "GPT 1T", Transformer: gpt("GPT 1T", 128, 25600, 160)},
	{ID: "bert-large", Name: "BERT-Large 340M", Transformer: bert("BERT-Large", 24, 1024, 16)},
	{ID: "bert-3.9b", Name: "BERT 3.9B", Transformer: bert("BERT 3.9B", 48, 2560, 40)},
	{ID: "pd-vgg16", Name: "VGG-16 (PipeDream profile)", Profile: "vgg16"},
	{ID: "pd-resnet50", Name: "ResNet-50 (PipeDream profile)", Profile: "resnet50"},
	{ID: "pd-gnmt", Name: "GNMT-8 (PipeDream profile)", Profile: "gnmt"},
	{ID: "pd-gnmt_large", Name: "GNMT-16 (PipeDream profile)", Profile: "gnmt_large"},
	{ID: "pd-alexnet", Name: "AlexNet (PipeDream profile)", Profile: "alexnet"},
	{ID: "pd-resnet101", Name: "ResNet-101 (PipeDream profile)", Profile: "resnet101"},
}

// llmPresets are modelprofiles' LLM presets (Llama 3, Mixtral, Qwen, DeepSeek,
// with their sources in modelprofiles/llm), at their pre-training sequence
// lengths.
var llmPresets = func() []ModelPreset {
	var out []ModelPreset
	for _, l := range modelprofiles.LLMs() {
		tr, _, err := modelprofiles.Transformer(l.ID)
		if err != nil {
			// modelprofiles' tests parse every embedded preset; reaching this is a build defect.
			panic("app: LLM preset " + l.ID + ": " + err.Error())
		}
		out = append(out, ModelPreset{ID: l.ID, Name: l.Name, Transformer: &tr})
	}
	return out
}()

// allPresets returns the GPT/BERT presets, the LLM presets and the
// PipeDream profiles, in that order.
func allPresets() []ModelPreset {
	var out []ModelPreset
	for _, m := range presets {
		if m.Profile == "" {
			out = append(out, m)
		}
	}
	out = append(out, llmPresets...)
	for _, m := range presets {
		if m.Profile != "" {
			out = append(out, m)
		}
	}
	return out
}

// Models lists the model presets, then the custom transformer.
func Models() []ModelPreset {
	return append(allPresets(), ModelPreset{ID: customID, Name: "Custom transformer…"})
}

// modelFor returns the request's model: a preset, the custom transformer or
// a Hugging Face config.json, with the request's sequence length and
// precision applied.
func modelFor(in request.Plan) (ModelPreset, error) {
	if in.Model == request.HFModel {
		tr, err := model.ParseHFConfig([]byte(in.HFConfig))
		if err != nil {
			return ModelPreset{}, &request.FieldError{Field: "plan.hf_config", Msg: err.Error()}
		}
		if tr.Name == "" {
			tr.Name = fmt.Sprintf("Hugging Face config l=%d h=%d a=%d", tr.Layers, tr.Hidden, tr.Heads)
		}
		return withTraining(ModelPreset{ID: request.HFModel, Name: tr.Name, Transformer: &tr}, in)
	}
	if in.Model == customID {
		c := in.Custom
		tr := gpt(c.Name, c.Layers, c.Hidden, c.Heads)
		if tr.Name == "" {
			tr.Name = fmt.Sprintf("transformer l=%d h=%d a=%d", c.Layers, c.Hidden, c.Heads)
		}
		if c.Vocab > 0 {
			tr.Vocab = c.Vocab
		}
		tr.FFN, tr.KVHeads, tr.GatedFFN, tr.UntiedEmbeddings = c.FFN, c.KVHeads, c.GatedFFN, c.UntiedEmbeddings
		tr.SlidingWindow, tr.SlidingLayers, tr.AttentionSinks = c.SlidingWindow, c.SlidingLayers, c.AttentionSinks
		if c.Experts > 0 {
			tr.MoE = &model.MoE{Experts: c.Experts, TopK: c.TopK, FFN: c.MoEFFN, SharedExperts: c.SharedExperts, Groups: c.ExpertGroups, GroupTopK: c.GroupTopK}
		}
		return withTraining(ModelPreset{ID: customID, Name: tr.Name, Transformer: tr}, in)
	}
	m, err := modelByID(in.Model)
	if err != nil {
		return m, err
	}
	return withTraining(m, in)
}

// withTraining applies the request's sequence length, precision and
// multi-token prediction depth to a transformer preset (a copy) and
// validates it.
func withTraining(m ModelPreset, in request.Plan) (ModelPreset, error) {
	if m.Transformer == nil {
		if in.MTPLayers != nil && *in.MTPLayers > 0 {
			return m, &request.FieldError{Field: "plan.mtp_layers", Msg: fmt.Sprintf("applies to transformer specs; %s is a measured per-layer profile, got %d", m.Name, *in.MTPLayers)}
		}
		return m, nil
	}
	tr := *m.Transformer
	if in.Seq > 0 {
		tr.Seq = in.Seq
	}
	tr.Precision = model.Precision(in.Precision)
	if in.MTPLayers != nil {
		tr.MTPLayers = *in.MTPLayers
	}
	if err := tr.Validate(); err != nil {
		return m, &request.FieldError{Field: "plan.model", Msg: err.Error()}
	}
	if err := withinLimits(tr, in); err != nil {
		return m, err
	}
	m.Transformer = &tr
	return m, nil
}

// withinLimits bounds the work a transformer asks of the planners: the
// request's limits apply to a Hugging Face config.json's dimensions (and
// the sequence it implies) as they do to a custom model's.
func withinLimits(tr model.Transformer, in request.Plan) error {
	field := "plan.model"
	if in.Model == request.HFModel {
		field = "plan.hf_config"
	}
	experts := 0
	if tr.MoE != nil {
		experts = tr.MoE.Experts
	}
	for _, d := range []struct {
		name   string
		v, max int
	}{
		{"layers", tr.Layers, request.MaxLayers}, {"hidden size", tr.Hidden, request.MaxHidden},
		{"attention heads", tr.Heads, request.MaxHeads}, {"vocabulary", tr.Vocab, request.MaxVocab},
		{"sequence length", tr.Seq, request.MaxSeq}, {"experts", experts, request.MaxExperts},
	} {
		if d.v > d.max {
			return &request.FieldError{Field: field, Msg: fmt.Sprintf("%s %d is over the planner's limit of %d", d.name, d.v, d.max)}
		}
	}
	return nil
}

// modelByID returns a preset (or any embedded PipeDream profile, see
// embeddedProfile) or an error listing the known ids.
func modelByID(id string) (ModelPreset, error) {
	all := allPresets()
	for _, m := range all {
		if m.ID == id {
			return m, nil
		}
	}
	if m, ok := embeddedProfile(id); ok {
		return m, nil
	}
	ids := make([]string, len(all))
	for i, m := range all {
		ids[i] = m.ID
	}
	return ModelPreset{}, &request.FieldError{Field: "plan.model", Msg: fmt.Sprintf("unknown preset %q (known: %v)", id, ids)}
}
