package cost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// KorthikantiRun is one case of testdata/korthikanti2022.json: a GPT
// configuration of Korthikanti et al. 2022 (Table 3) with its published
// iteration time (Table 5, runs) or per-GPU memory (Figure 1, fig1_memory).
// Every number is as the source prints it except DP, derived.
type KorthikantiRun struct {
	// ID names the case ("korthikanti-22b-full").
	ID string `json:"id"`
	// Layers, Hidden, Heads, Seq and Vocab are the GPT model's dimensions.
	Layers int `json:"layers"`
	Hidden int `json:"hidden"`
	Heads  int `json:"heads"`
	Seq    int `json:"seq"`
	Vocab  int `json:"vocab"`
	sourceSystem
	// TP, PP, VP and DP are the tensor, pipeline, interleaving and data
	// parallel degrees.
	TP int `json:"tp"`
	PP int `json:"pp"`
	VP int `json:"vp"`
	DP int `json:"dp_derived"`
	// Microbatch and GlobalBatch are in sequences.
	Microbatch  int `json:"microbatch"`
	GlobalBatch int `json:"global_batch"`
	// Recompute is a model.Recompute ("full", "selective").
	Recompute        string `json:"recompute"`
	SequenceParallel bool   `json:"sequence_parallel"`
	// PublishedSeconds is Table 5's iteration time (0 in Figure 1's cases).
	PublishedSeconds float64 `json:"published_iteration_seconds"`
	// PublishedPOGiB and PublishedActGiB are Figure 1's parameters and
	// optimizer state and activations per GPU (0 in Table 5's cases).
	PublishedPOGiB  float64 `json:"published_params_optimizer_gib"`
	PublishedActGiB float64 `json:"published_activations_gib"`
	// Set is "held_out": nothing of the model was fitted on the case.
	Set    string `json:"set"`
	Source string `json:"source"`
	Note   string `json:"note"`
}

// ReadKorthikanti decodes a korthikanti2022.json file strictly (unknown
// fields and trailing data are errors): Table 5's cases and Figure 1's.
func ReadKorthikanti(data []byte) (runs, fig1 []KorthikantiRun, err error) {
	var f struct {
		README string           `json:"README"`
		Runs   []KorthikantiRun `json:"runs"`
		Fig1   []KorthikantiRun `json:"fig1_memory"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, nil, fmt.Errorf("korthikanti2022: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, fmt.Errorf("korthikanti2022: trailing data after the JSON value")
	}
	return f.Runs, f.Fig1, nil
}

// PredictKorthikanti predicts case r on GPUs g as the paper ran it
// (Megatron-LM, 2022, A100): its degrees, interleaving, microbatch, batch,
// recomputation and sequence parallelism; scatter/gather; no flash
// attention; the column-parallel layers' backward collectives behind their
// GEMMs (plan.Overlap.TPBackward: Megatron-LM's asynchronous
// tensor-parallel all-reduce, on by default then) and no other overlap;
// the weight gradients accumulated inside the GEMMs (gradient accumulation
// fusion); 16-bit weights with fp32 gradients and Adam state (18 B per
// parameter, as Figure 1 counts). The runs were fp16, costed as such (the
// A100's fp16 tensor-core rate and matmul ceiling are bf16's:
// hw.GPU.MatmulCeiling; the optimizer step unscales the gradients); a
// case of another precision is an error. opt is the cost options.
func PredictKorthikanti(r KorthikantiRun, g hw.GPU, opt Options) (Prediction, error) {
	if r.Precision != string(model.FP16) {
		return Prediction{}, fmt.Errorf("%s: precision %q, want fp16 (the source's)", r.ID, r.Precision)
	}
	c, err := r.newCluster(g)
	if err != nil {
		return Prediction{}, fmt.Errorf("%s: %w", r.ID, err)
	}
	tr := model.Transformer{Layers: r.Layers, Hidden: r.Hidden, Heads: r.Heads, Seq: r.Seq, Vocab: r.Vocab, Precision: model.FP16}
	ex := plan.Execution{TP: r.TP, PP: r.PP, DP: r.DP, Interleave: r.VP, MicrobatchSize: r.Microbatch, GlobalBatch: r.GlobalBatch,
		Recompute: model.Recompute(r.Recompute), SequenceParallel: r.SequenceParallel, ScatterGather: true,
		Optimizer: string(MixedAdamFP32Grads), Overlap: plan.Overlap{TPBackward: true}}
	pr, err := Predict(tr, c, ex, opt)
	if err != nil {
		return Prediction{}, fmt.Errorf("%s: %w", r.ID, err)
	}
	return pr, nil
}
