package ui

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"pipeplan/app"
	"pipeplan/app/request"
	"pipeplan/core/hw"
	"pipeplan/core/plan"
)

// PlanPage is the Plan page: model, cluster and training inputs on the left,
// the ranked candidates, memory bars, timeline and stage map on the right.
type PlanPage struct {
	// App is the shared application model.
	App *App
}

// option is one entry of a select.
type option struct{ ID, Name string }

func (c *PlanPage) models() []option {
	var out []option
	for _, m := range app.Models() {
		out = append(out, option{m.ID, m.Name})
	}
	if c.App.State.Plan.Model == request.HFModel {
		out = append(out, option{request.HFModel, "Hugging Face config.json (below)"})
	}
	if up := c.App.uploaded; up != nil {
		out = append(out, option{app.UploadedID, "Uploaded: " + up.Name})
	} else if c.App.State.Plan.Model == app.UploadedID {
		out = append(out, option{app.UploadedID, "Uploaded profile (not in this page)"})
	}
	return out
}

func (c *PlanPage) gpus() []option {
	var out []option
	for _, g := range app.GPUs() {
		out = append(out, option{g.ID, g.Name})
	}
	return out
}

func (c *PlanPage) planners() []option {
	names := map[string]string{
		"best": "Best overall", "ptdp": "PTD-P (Megatron)", "2bw": "PipeDream-2BW",
		"pipedream": "PipeDream", "madpipe": "MadPipe",
	}
	var out []option
	for _, id := range request.Planners {
		out = append(out, option{id, names[id]})
	}
	return out
}

// choiceNames name the values of the training options' selects.
var choiceNames = map[string]string{
	"bf16": "bf16", "fp16": "fp16", "fp32": "fp32", "fp8": "fp8",
	"mixed-adam": "Adam, mixed precision", "mixed-adam-fp32-grads": "Adam, mixed precision, fp32 gradients",
	"adam": "Adam, fp32", "sgd": "SGD with momentum",
	"none": "none", "selective": "selective (attention core)", "full": "full (layer inputs only)",
	"p2p": "p2p: ring, overlapped with the attention", "all_gather": "all-gather K/V (Llama 3), exposed",
	"a2a":   "all-to-all (Ulysses), exposed",
	"cudnn": "cuDNN (Transformer Engine)", "flash2": "FlashAttention-2 (PyTorch SDPA; 2024 kernels)",
	"alltoall": "alltoall (every routed copy sent)", "deepep": "DeepEP (each token once per server)",
	"gpipe": "GPipe (all forwards, then all backwards)", "1f1b": "1F1B (PipeDream-Flush)",
	"interleaved": "interleaved 1F1B (Megatron-LM)", "2bw": "PipeDream-2BW (no flush, two weight versions)",
	"zb-h1":      "ZB-H1 (zero bubble: weight gradients fill the flush)",
	"zb-v":       "ZB-V (zero bubble: two chunks a device in a V)",
	"dualpipe-v": "DualPipeV (DeepSeek: ZB-V's V, forward and backward paired)",
}

// choices lists the options of a training select.
func (c *PlanPage) choices(field string) []option {
	var list []string
	switch field {
	case "precision":
		list = request.Precisions
	case "optimizer":
		list = request.Optimizers
	case "recompute":
		list = request.Recomputes
	case "cp_comm":
		list = plan.CPComms
	case "attention_kernel":
		list = plan.AttentionKernels
	case "ep_dispatcher":
		list = request.EPDispatchers
	case "schedule":
		list = request.PTDPSchedules
	case "zero":
		return []option{{"", "searched (1, or the faster of 2 and 3 if 1 does not fit)"}, {"0", "0: none"}, {"1", "1: optimizer state (distributed optimizer)"},
			{"2", "2: + gradients"}, {"3", "3: + weights (FSDP)"}}
	}
	defaults := map[string]string{"precision": "default (bf16)", "optimizer": "default (Adam, mixed precision)", "recompute": "searched per candidate",
		"cp_comm": "searched (p2p or a2a per candidate)", "ep_dispatcher": "default (alltoall)", "attention_kernel": "default (cuDNN)",
		"schedule": "default (1F1B, interleaved when v > 1)"}
	out := make([]option, len(list))
	for i, id := range list {
		out[i] = option{id, choiceNames[id]}
	}
	out[0].Name = defaults[field]
	return out
}

// showCPComm reports whether the context-parallel communication choice
// applies: cp pinned above 1, or the shown candidate splits the sequence.
func (c *PlanPage) showCPComm() bool {
	if c.App.State.Plan.CP > 1 {
		return true
	}
	r := c.App.Plan.Result
	return r.Selected >= 0 && r.Selected < len(r.Candidates) && r.Candidates[r.Selected].Execution.CP > 1
}

// isMoE reports whether the chosen model is a mixture of experts (the
// expert-parallel inputs apply): the custom transformer with experts, a
// preset with them, or the Hugging Face config last planned.
func (c *PlanPage) isMoE() bool {
	p := c.App.State.Plan
	switch p.Model {
	case "custom":
		return p.Custom.Experts > 0
	case request.HFModel:
		tr := c.App.Plan.Result.Transformer
		return tr != nil && tr.MoE != nil
	}
	for _, m := range app.Models() {
		if m.ID == p.Model {
			return m.Transformer != nil && m.Transformer.MoE != nil
		}
	}
	return false
}

// isTransformer reports whether the chosen model is a transformer spec
// (the training options apply) rather than a measured layer profile.
func (c *PlanPage) isTransformer() bool {
	if c.App.State.Plan.Model == request.HFModel {
		return true
	}
	for _, m := range app.Models() {
		if m.ID == c.App.State.Plan.Model {
			return m.Profile == ""
		}
	}
	return false
}

// seq is the sequence length in effect: the override, or the preset's (a
// pasted config.json's is what its plan used).
func (c *PlanPage) seq() int {
	if c.App.State.Plan.Seq > 0 {
		return c.App.State.Plan.Seq
	}
	if tr := c.App.Plan.Result.Transformer; c.App.State.Plan.Model == request.HFModel && tr != nil {
		return tr.Seq
	}
	for _, m := range app.Models() {
		if m.ID == c.App.State.Plan.Model && m.Transformer != nil {
			return m.Transformer.Seq
		}
	}
	return 2048
}

// strconvItoa formats an int for templates (generated code imports no strconv).
func strconvItoa(i int) string { return strconv.Itoa(i) }

// intraNodeText states the intra-node bandwidth the plan assumes.
func (c *PlanPage) intraNodeText() string {
	for _, g := range app.GPUs() {
		if g.ID == c.App.State.Plan.GPU {
			if g.PeerBandwidthBytesPerSec == 0 {
				return "Intra-node bandwidth: unknown for this GPU."
			}
			return fmt.Sprintf("Intra-node bandwidth: %.0f GB/s per GPU (%s, from the GPU profile); memory %s.", g.PeerBandwidthBytesPerSec/1e9, g.Fabric, gib(g.MemoryBytes))
		}
	}
	return ""
}

// interNodeText states the network between nodes the plan assumes: the
// input's figure, or with 0 the GPU's own (gpuprofiles/network.json).
func (c *PlanPage) interNodeText() string {
	if bw := c.App.State.Plan.InterNodeGBps; bw > 0 {
		return fmt.Sprintf("Between nodes: %.4g GB/s per GPU, as given.", bw)
	}
	for _, g := range app.GPUs() {
		if g.ID == c.App.State.Plan.GPU {
			if g.NetworkBandwidthBytesPerSec == 0 {
				return fmt.Sprintf("Between nodes: %.4g GB/s per GPU (no network figure for this GPU: the default).", hw.DefaultInterNodeBandwidthBytesPerSec/1e9)
			}
			return fmt.Sprintf("Between nodes: %.4g GB/s per GPU (%.0f Gb/s, the GPU's reference server network, gpuprofiles).", g.NetworkBandwidthBytesPerSec/1e9, g.NetworkBandwidthBytesPerSec*8/1e9)
		}
	}
	return ""
}

func (c *PlanPage) maxNodes() int       { return request.MaxNodes }
func (c *PlanPage) maxGPUsPerNode() int { return request.MaxGPUsPerNode }

// PlanView is the Plan page's latest result as the components show it.
type PlanView struct {
	// Result is the planner's answer; zero when Err is set.
	Result app.Result
	// Err says why there is no plan ("" when there is one).
	Err string
	// Millis is how long the last re-plan took in the page, in ms.
	Millis float64
	// Running reports a plan working in the Web Worker;
	// Progress is its fraction done.
	Running  bool
	Progress float64

	stop func() // stops the worker running the plan
}

// TimingText reports how long the last plan took, or that it is pending.
func (v PlanView) TimingText() string {
	switch {
	case v.Running:
		return fmt.Sprintf("planning… %.0f %%", 100*v.Progress)
	case v.Millis == 0 && v.Err == "" && v.Result.Model == "":
		return "planning…"
	}
	return fmt.Sprintf("planned in %.1f ms", v.Millis)
}

// planInput parses the text of one Plan-page input into its request
// field; what says what the field takes, for a parse error.
type planInput struct {
	what string
	set  func(p *request.Plan, value string) error
}

// textInput, intInput, floatInput and boolInput set a field of their kind;
// optBoolInput and optIntInput set a choice that "" leaves to its default
// (nil).
func textInput(f func(*request.Plan) *string) planInput {
	return planInput{"text", func(p *request.Plan, v string) error { *f(p) = v; return nil }}
}

func intInput(f func(*request.Plan) *int) planInput {
	return planInput{"a whole number", func(p *request.Plan, v string) (err error) { *f(p), err = strconv.Atoi(v); return err }}
}

func floatInput(f func(*request.Plan) *float64) planInput {
	return planInput{"a number", func(p *request.Plan, v string) (err error) { *f(p), err = strconv.ParseFloat(v, 64); return err }}
}

func boolInput(f func(*request.Plan) *bool) planInput {
	return planInput{"true or false", func(p *request.Plan, v string) (err error) { *f(p), err = strconv.ParseBool(v); return err }}
}

func optBoolInput(f func(*request.Plan) **bool) planInput {
	return optionalInput("true, false or empty (the GPU's default)", strconv.ParseBool, f)
}

func optIntInput(empty string, f func(*request.Plan) **int) planInput {
	return optionalInput("a whole number or empty ("+empty+")", strconv.Atoi, f)
}

// optionalInput sets *f(p) to the parsed value, or nil for "".
func optionalInput[T any](what string, parse func(string) (T, error), f func(*request.Plan) **T) planInput {
	return planInput{what, func(p *request.Plan, v string) error {
		if v == "" {
			*f(p) = nil
			return nil
		}
		x, err := parse(v)
		*f(p) = &x
		return err
	}}
}

// planInputs are the Plan page's inputs, each named as the request names
// its field under "plan." (request.Plan's JSON: custom.layers is
// plan.custom.layers), so a parse error and a validation error name it
// the same way.
var planInputs = map[string]planInput{
	// A preset drops a pasted config.json; a pasted one is the model.
	"model": {"text", func(p *request.Plan, v string) error {
		if v == request.HFModel && p.HFConfig == "" {
			return &request.FieldError{Field: "plan.model", Msg: fmt.Sprintf("%q is a pasted or uploaded config.json: give one below", v)}
		}
		if p.Model = v; v != request.HFModel {
			p.HFConfig = ""
		}
		return nil
	}},
	"hf_config": {"text", func(p *request.Plan, v string) error {
		if p.HFConfig = v; v != "" {
			p.Model = request.HFModel
		}
		return nil
	}},
	"gpu":                      textInput(func(p *request.Plan) *string { return &p.GPU }),
	"planner":                  textInput(func(p *request.Plan) *string { return &p.Planner }),
	"nodes":                    intInput(func(p *request.Plan) *int { return &p.Nodes }),
	"gpus_per_node":            intInput(func(p *request.Plan) *int { return &p.GPUsPerNode }),
	"selected":                 intInput(func(p *request.Plan) *int { return &p.Selected }),
	"custom.layers":            intInput(func(p *request.Plan) *int { return &p.Custom.Layers }),
	"custom.hidden":            intInput(func(p *request.Plan) *int { return &p.Custom.Hidden }),
	"custom.heads":             intInput(func(p *request.Plan) *int { return &p.Custom.Heads }),
	"custom.vocab":             intInput(func(p *request.Plan) *int { return &p.Custom.Vocab }),
	"custom.ffn":               intInput(func(p *request.Plan) *int { return &p.Custom.FFN }),
	"custom.kv_heads":          intInput(func(p *request.Plan) *int { return &p.Custom.KVHeads }),
	"custom.gated_ffn":         boolInput(func(p *request.Plan) *bool { return &p.Custom.GatedFFN }),
	"custom.untied_embeddings": boolInput(func(p *request.Plan) *bool { return &p.Custom.UntiedEmbeddings }),
	// Experts come with a top-k (kept within them, 1 when there was none)
	// and go with their other fields, so the form can set one at a time.
	"custom.experts": {"a whole number", func(p *request.Plan, v string) (err error) {
		c := &p.Custom
		if c.Experts, err = strconv.Atoi(v); err != nil {
			return err
		}
		if c.Experts <= 0 {
			c.TopK, c.MoEFFN, c.SharedExperts, c.ExpertGroups, c.GroupTopK = 0, 0, 0, 0, 0
		} else {
			c.TopK = min(max(c.TopK, 1), c.Experts)
		}
		return nil
	}},
	"custom.topk":           intInput(func(p *request.Plan) *int { return &p.Custom.TopK }),
	"custom.moe_ffn":        intInput(func(p *request.Plan) *int { return &p.Custom.MoEFFN }),
	"custom.shared_experts": intInput(func(p *request.Plan) *int { return &p.Custom.SharedExperts }),
	"custom.expert_groups":  intInput(func(p *request.Plan) *int { return &p.Custom.ExpertGroups }),
	"custom.group_topk":     intInput(func(p *request.Plan) *int { return &p.Custom.GroupTopK }),
	// A window applies to every layer until fewer are given; no window, to none.
	"custom.sliding_window": {"a whole number", func(p *request.Plan, v string) (err error) {
		c := &p.Custom
		if c.SlidingWindow, err = strconv.Atoi(v); err != nil {
			return err
		}
		if c.SlidingWindow <= 0 {
			c.SlidingLayers = 0
		} else if c.SlidingLayers == 0 {
			c.SlidingLayers = c.Layers
		}
		return nil
	}},
	"custom.sliding_layers":  intInput(func(p *request.Plan) *int { return &p.Custom.SlidingLayers }),
	"custom.attention_sinks": boolInput(func(p *request.Plan) *bool { return &p.Custom.AttentionSinks }),
	"seq":                    intInput(func(p *request.Plan) *int { return &p.Seq }),
	"precision":              textInput(func(p *request.Plan) *string { return &p.Precision }),
	"optimizer":              textInput(func(p *request.Plan) *string { return &p.Optimizer }),
	"zero":                   optIntInput("searched", func(p *request.Plan) **int { return &p.ZeRO }),
	"mtp_layers":             optIntInput("the model's own", func(p *request.Plan) **int { return &p.MTPLayers }),
	"recompute":              textInput(func(p *request.Plan) *string { return &p.Recompute }),
	"global_batch":           intInput(func(p *request.Plan) *int { return &p.GlobalBatch }),
	"inter_node_gbps":        floatInput(func(p *request.Plan) *float64 { return &p.InterNodeGBps }),
	"tp":                     intInput(func(p *request.Plan) *int { return &p.TP }),
	"pp":                     intInput(func(p *request.Plan) *int { return &p.PP }),
	"cp":                     intInput(func(p *request.Plan) *int { return &p.CP }),
	"ep":                     intInput(func(p *request.Plan) *int { return &p.EP }),
	"recompute_layers":       intInput(func(p *request.Plan) *int { return &p.RecomputeLayers }),
	"recompute_modules":      textInput(func(p *request.Plan) *string { return &p.RecomputeModules }),
	"etp":                    intInput(func(p *request.Plan) *int { return &p.ETP }),
	"cp_comm":                textInput(func(p *request.Plan) *string { return &p.CPComm }),
	"schedule":               textInput(func(p *request.Plan) *string { return &p.Schedule }),
	"attention_kernel":       textInput(func(p *request.Plan) *string { return &p.AttentionKernel }),
	"microbatch":             intInput(func(p *request.Plan) *int { return &p.Microbatch }),
	"interleave":             intInput(func(p *request.Plan) *int { return &p.Interleave }),
	"flash_attention":        boolInput(func(p *request.Plan) *bool { return &p.FlashAttention }),
	"sequence_parallel":      optBoolInput(func(p *request.Plan) **bool { return &p.SequenceParallel }),
	"overlap_grad_reduce":    optBoolInput(func(p *request.Plan) **bool { return &p.OverlapGradReduce }),
	"overlap_param_gather":   optBoolInput(func(p *request.Plan) **bool { return &p.OverlapParamGather }),
	"tp_comm_overlap":        optBoolInput(func(p *request.Plan) **bool { return &p.TPCommOverlap }),
	"ep_dispatcher":          textInput(func(p *request.Plan) *string { return &p.EPDispatcher }),
	"overlap_ep_comm":        boolInput(func(p *request.Plan) *bool { return &p.OverlapEPComm }),
	"fp8_param_gather":       boolInput(func(p *request.Plan) *bool { return &p.FP8ParamGather }),
}

// SetPlanInput sets one Plan-page input, named as the request names its
// field (without "plan."; planInputs), from its text form; a malformed
// value is shown as an error naming plan.field and leaves the state
// unchanged.
func (a *App) SetPlanInput(field, value string) {
	in, ok := planInputs[field]
	if !ok {
		a.Err = fmt.Sprintf("plan.%s: not an input of the Plan page", field)
		return
	}
	p := a.State.Plan
	p.Selected = 0 // a new input gives a new ranking
	if err := in.set(&p, value); err != nil {
		var fe *request.FieldError
		if a.Err = fmt.Sprintf("plan.%s: must be %s, got %q", field, in.what, value); errors.As(err, &fe) {
			a.Err = fe.Error()
		}
		return
	}
	next := a.State
	next.Plan = p
	if err := next.Validate(); err != nil {
		a.Err = err.Error()
		return
	}
	a.State = next
	a.changed()
}

// replan runs the planner on the current inputs in a Web Worker: PTD-P's
// search on thousands of GPUs takes hundreds of milliseconds, the
// layer-profile planners seconds, and the page must never freeze. The last
// result stays on screen until the new one arrives; a newer input or
// Cancel stops the worker at once. Without a worker (tests) it plans in place.
func (a *App) replan() {
	a.stopPlan()
	a.planRun++
	if stop, ok := a.replanInWorker(); ok {
		a.Plan = PlanView{Result: a.Plan.Result, Running: true, stop: stop}
		return
	}
	start := a.browser.NowMillis()
	res, err := a.plan(context.Background(), nil)
	a.Plan = PlanView{Result: res}
	if err != nil {
		a.Plan.Err = err.Error()
	}
	a.Plan.Millis = a.browser.NowMillis() - start
}

// replanInWorker starts the plan in a Web Worker; ok is false when there
// is none, or nothing to send it (a link naming an upload this page lacks).
func (a *App) replanInWorker() (stop func(), ok bool) {
	job := Job{Kind: JobPlan, Plan: &a.State.Plan}
	if a.State.Plan.Model == app.UploadedID {
		if a.uploaded == nil {
			return nil, false
		}
		job.Profile = a.uploaded
	}
	run, start := a.planRun, a.browser.NowMillis()
	return a.startJob(job, func(done, total float64) *ProgressBar {
		if a.planRun != run || !a.Plan.Running {
			return &ProgressBar{} // nothing to show: no render either
		}
		a.Plan.Progress = done / total
		return &ProgressBar{ID: "plan-progress", Value: a.Plan.Progress, Max: 1, Text: a.Plan.TimingText()}
	}, func(ans JobAnswer) {
		if a.planRun != run {
			return // superseded by a newer input
		}
		a.Plan = PlanView{Millis: a.browser.NowMillis() - start}
		switch {
		case ans.Err != "":
			a.Plan.Err = ans.Err
		case ans.Plan != nil:
			a.Plan.Result = *ans.Plan
		}
	})
}

// plan runs the planner on the current inputs (the uploaded profile or a preset).
func (a *App) plan(ctx context.Context, progress func(float64)) (app.Result, error) {
	if a.State.Plan.Model == app.UploadedID {
		return a.planUploaded(ctx, progress)
	}
	return app.PlanProgress(ctx, a.State.Plan, progress)
}

// stopPlan ends a plan running in the worker, if any.
func (a *App) stopPlan() {
	if a.Plan.stop != nil {
		a.Plan.stop()
		a.Plan.stop = nil
	}
}

// CancelPlan stops a plan running in the worker; the page says so at once.
// The previous inputs' result goes too: it is not a plan of the inputs
// shown, and Export must not offer it as one.
func (a *App) CancelPlan() {
	if !a.Plan.Running {
		return
	}
	a.stopPlan()
	a.planRun++ // an answer already on its way is dropped
	a.Plan = PlanView{Err: "planning cancelled: change an input to plan again"}
}
