package ui

import (
	"strconv"

	"pipeplan/app"
	"pipeplan/app/request"
	"pipeplan/core/plan"
	"pipeplan/gpuprofiles"
)

// hfConfigInputID is the file input of the Hugging Face config.json upload.
const hfConfigInputID = "hf-file"

// numberInput is one number input of the Plan page, bound to the request
// field Field (planInputs' name).
type numberInput struct {
	ID, Field, Label, Title, Min, Value string
}

// intText is n as an input shows it.
func intText(n int) string { return strconv.Itoa(n) }

// customInputs are the custom transformer's number inputs: its dimensions,
// grouped-query attention and mixture of experts (request.CustomModel).
func (c *PlanPage) customInputs() []numberInput {
	m := c.App.State.Plan.Custom
	return []numberInput{
		{"custom-layers", "custom.layers", "Layers l", "transformer layers", "1", intText(m.Layers)},
		{"custom-hidden", "custom.hidden", "Hidden size h", "model width", "1", intText(m.Hidden)},
		{"custom-heads", "custom.heads", "Attention heads a", "query heads", "1", intText(m.Heads)},
		{"custom-kv-heads", "custom.kv_heads", "K/V heads (0 = a)", "key/value heads, dividing a: grouped-query attention (1 = multi-query)", "0", intText(m.KVHeads)},
		{"custom-ffn", "custom.ffn", "FFN size (0 = 4h)", "inner size of the dense MLP", "0", intText(m.FFN)},
		{"custom-vocab", "custom.vocab", "Vocabulary (0 = 51200)", "vocabulary size V", "0", intText(m.Vocab)},
		{"custom-experts", "custom.experts", "Experts (0 = dense)", "routed experts of every MLP (mixture of experts)", "0", intText(m.Experts)},
		{"custom-topk", "custom.topk", "Top-k experts per token", "routed experts each token goes to, 1 to the experts", "0", intText(m.TopK)},
		{"custom-moe-ffn", "custom.moe_ffn", "Expert FFN size (0 = FFN)", "inner size of one expert's MLP", "0", intText(m.MoEFFN)},
		{"custom-shared-experts", "custom.shared_experts", "Shared experts", "experts every token also goes through (DeepSeek-MoE)", "0", intText(m.SharedExperts)},
		{"custom-expert-groups", "custom.expert_groups", "Expert groups (0 = none)", "routed experts split into equal groups, each token's from a few of them (DeepSeek-V3's node-limited routing: 8)", "0", intText(m.ExpertGroups)},
		{"custom-group-topk", "custom.group_topk", "Groups per token", "groups a token's experts may come from (DeepSeek-V3: 4)", "0", intText(m.GroupTopK)},
		{"custom-sliding-window", "custom.sliding_window", "Sliding window (tokens, 0 = none)", "the windowed layers attend to this many most recent tokens (GPT-OSS: 128)", "0", intText(m.SlidingWindow)},
		{"custom-sliding-layers", "custom.sliding_layers", "Windowed layers", "how many layers attend in the sliding window (GPT-OSS: half of them)", "0", intText(m.SlidingLayers)},
	}
}

// degreeInputs pin the PTD-P search's degrees (0 = searched).
func (c *PlanPage) degreeInputs() []numberInput {
	p := c.App.State.Plan
	return []numberInput{
		{"tp", "tp", "Tensor parallel t (0 = searched)", "tensor-parallel size (§4.2.3)", "0", intText(p.TP)},
		{"pp", "pp", "Pipeline parallel p (0 = searched)", "pipeline-parallel size (§4.2.2)", "0", intText(p.PP)},
		{"cp", "cp", "Context parallel cp (0 = searched)", "context-parallel size: the sequence split over GPUs (ring attention)", "0", intText(p.CP)},
		{"ep", "ep", "Expert parallel ep (0 = searched)", "expert-parallel size of MoE layers", "0", intText(p.EP)},
		{"etp", "etp", "Expert tensor parallel etp (0 = default)", "ranks splitting each routed expert (Megatron-Core's --expert-tensor-parallel-size); 0: 1 with expert parallelism, t without (not searched)", "0", intText(p.ETP)},
		{"microbatch", "microbatch", "Microbatch b (0 = searched)", "samples per microbatch (§4.3.3)", "0", intText(p.Microbatch)},
		{"interleave", "interleave", "Chunks per GPU v (0 = searched)", "model chunks per GPU, interleaved schedule (§4.2.2)", "0", intText(p.Interleave)},
		{"recompute_layers", "recompute_layers", "Recomputed layers a chunk (0 = all)", "with recompute full: the first layers of each model chunk that recompute, the others keep their activations (Megatron-LM's --recompute-method block); a searched recomputation recomputes as few as fit", "0", intText(p.RecomputeLayers)},
	}
}

// mtpText is the multi-token prediction input's value: "" when the
// model's own.
func (c *PlanPage) mtpText() string { return optIntText(c.App.State.Plan.MTPLayers) }

// maxMTPLayers is the multi-token prediction input's maximum.
func (c *PlanPage) maxMTPLayers() int { return request.MaxMTPLayers }

// zeroText is the ZeRO select's value: "" when searched.
func (c *PlanPage) zeroText() string { return optIntText(c.App.State.Plan.ZeRO) }

// optIntText is an optional whole number as an input shows it: "" for nil.
func optIntText(n *int) string {
	if n == nil {
		return ""
	}
	return strconv.Itoa(*n)
}

// overlapInput is one overlap select: its request field, label and value.
type overlapInput struct {
	ID, Field, Label, Title, Value string
	Options                        []option
}

// overlapInputs are the overlap choices; each defaults to what Megatron-LM
// recommends for the chosen GPU (app.DefaultOverlap), said in its first option.
func (c *PlanPage) overlapInputs() []overlapInput {
	p := c.App.State.Plan
	var def plan.Overlap
	if g, err := gpuprofiles.ByID(p.GPU); err == nil {
		def = app.DefaultOverlap(g, p.UsesSequenceParallel())
	}
	mk := func(id, field, label, title string, v *bool, d bool) overlapInput {
		value := ""
		if v != nil {
			value = strconv.FormatBool(*v)
		}
		return overlapInput{id, field, label, title, value, []option{
			{"", "default for this GPU (" + onOff(d) + ")"}, {"true", "on"}, {"false", "off"}}}
	}
	return []overlapInput{
		mk("overlap-grad-reduce", "overlap_grad_reduce", "Overlap gradient reduction", "data-parallel reduce-scatter in buckets during the backward (Megatron-LM --overlap-grad-reduce)", p.OverlapGradReduce, def.GradReduce),
		mk("overlap-param-gather", "overlap_param_gather", "Overlap parameter gather", "the distributed optimizer's all-gather during the forward (--overlap-param-gather)", p.OverlapParamGather, def.ParamGather),
		mk("tp-comm-overlap", "tp_comm_overlap", "Overlap TP communication", "tensor-parallel communication hidden behind the GEMMs (--tp-comm-overlap, Transformer Engine)", p.TPCommOverlap, def.TPComm),
	}
}

// onOff says "on" or "off".
func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// SetPlanBool sets a checkbox input of the Plan page.
func (a *App) SetPlanBool(field string, v bool) {
	a.SetPlanInput(field, strconv.FormatBool(v))
}

// UploadHFConfig reads the Hugging Face config.json chosen in its file
// input and plans it (the text goes in the state, so a link carries it).
func (a *App) UploadHFConfig() {
	env := a.env
	a.browser.ReadFile(hfConfigInputID, func(name string, data []byte, err error) {
		if env != nil {
			env.Lock()
			defer env.UnlockRender()
		}
		if err != nil {
			a.Err = "Upload config.json: " + err.Error()
			return
		}
		if len(data) > request.MaxHFConfigBytes {
			a.Err = "Upload config.json: " + name + " is " + strconv.Itoa(len(data)) + " bytes, over the limit of " + strconv.Itoa(request.MaxHFConfigBytes)
			return
		}
		a.SetPlanInput("hf_config", string(data))
	})
}
