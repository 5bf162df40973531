package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
)

// rankResult is one worker's result-rank<N>.json.
type rankResult struct {
	Rank    int `json:"rank"`
	Stage   int `json:"stage"`
	Replica int `json:"replica"`
	// TPRank is the rank's place in its tensor-parallel group.
	TPRank int `json:"tp_rank"`
	// StepSeconds are the measured (post-warmup) step times of this rank.
	StepSeconds []float64 `json:"step_seconds"`
	// Losses are the mean microbatch losses of every step (last stage,
	// tensor- and context-parallel rank 0 only).
	Losses []float64 `json:"losses"`
	// PeakMemoryBytes is torch.cuda.max_memory_allocated, or maxrss on CPU.
	PeakMemoryBytes float64 `json:"peak_memory_bytes"`
	TorchVersion    string  `json:"torch_version"`
	// Actions are the actions the rank executed in the measured steps, timed.
	Actions []actionTiming `json:"actions"`
	// WeightVersions is the most weight versions the rank held at once (1
	// for a synchronous schedule).
	WeightVersions int `json:"weight_versions"`
	// ParameterBytes are the rank's weights; OptimizerStateBytes its
	// optimizer's state (momentum buffers: 1/dp of them under ZeRO-1).
	ParameterBytes      float64 `json:"parameter_bytes"`
	OptimizerStateBytes float64 `json:"optimizer_state_bytes"`
	// Forwards counts the forward passes the rank ran over the whole run,
	// recomputation included: of its model chunks, of transformer layers
	// and of attention cores (model.py's Recompute.FORWARDS).
	Forwards forwardCounts `json:"forwards"`
}

// forwardCounts are a rank's forward passes (rankResult.Forwards).
type forwardCounts struct {
	Chunk         int `json:"chunk"`
	Layer         int `json:"layer"`
	AttentionCore int `json:"attention_core"`
}

// actionTiming is one executed action: F, B, I, W, OPT_STEP, RECV_F and
// RECV_B (waiting for a neighbour's activation or gradient) and
// REDUCE_GRAD (one gradient bucket's data-parallel reduction, from its
// launch to its completion). Start and End are seconds from the start of
// step Step (after its barrier) for a flushing schedule, and from the start
// of the run (after its barrier; no barriers follow) for one without
// flushes, whose step is the microbatch's batch.
type actionTiming struct {
	Kind  string `json:"kind"`
	Stage int    `json:"stage"`
	Chunk int    `json:"chunk"`
	// Microbatch is -1 for stage-wide actions (OPT_STEP, REDUCE_GRAD).
	Microbatch int     `json:"microbatch"`
	Step       int     `json:"step"`
	Start      float64 `json:"start"`
	End        float64 `json:"end"`
}

// maxResultBytes bounds a result file (a few numbers per step).
const maxResultBytes = 16 << 20

// parseResult decodes and checks a worker's result against the rank it was
// given and the run's step counts.
func parseResult(data []byte, want rankInfo, c *runConfig) (*rankResult, error) {
	if len(data) > maxResultBytes {
		return nil, fmt.Errorf("result: %d bytes is over the %d-byte limit", len(data), maxResultBytes)
	}
	var r rankResult
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("result: trailing data after the JSON value")
	}
	switch {
	case r.Rank != want.Rank || r.Stage != want.Stage || r.Replica != want.Replica || r.TPRank != want.TPRank:
		return nil, fmt.Errorf("result: rank/stage/replica/tp_rank: want %d/%d/%d/%d, got %d/%d/%d/%d",
			want.Rank, want.Stage, want.Replica, want.TPRank, r.Rank, r.Stage, r.Replica, r.TPRank)
	case len(r.StepSeconds) != c.Steps:
		return nil, fmt.Errorf("result.step_seconds: want %d steps, got %d", c.Steps, len(r.StepSeconds))
	case !finiteNonNegative(r.PeakMemoryBytes):
		return nil, fmt.Errorf("result.peak_memory_bytes: must be a finite number >= 0, got %v", r.PeakMemoryBytes)
	case !finiteNonNegative(r.ParameterBytes) || !finiteNonNegative(r.OptimizerStateBytes):
		return nil, fmt.Errorf("result.parameter_bytes, optimizer_state_bytes: must be finite numbers >= 0, got %v, %v", r.ParameterBytes, r.OptimizerStateBytes)
	case r.WeightVersions < 1:
		return nil, fmt.Errorf("result.weight_versions: must be >= 1, got %d", r.WeightVersions)
	}
	for i, s := range r.StepSeconds {
		if !finiteNonNegative(s) {
			return nil, fmt.Errorf("result.step_seconds[%d]: must be a finite number >= 0, got %v", i, s)
		}
	}
	for i, a := range r.Actions {
		if !finiteNonNegative(a.Start) || !finiteNonNegative(a.End) || a.End < a.Start {
			return nil, fmt.Errorf("result.actions[%d]: start %v and end %v must be finite with 0 <= start <= end", i, a.Start, a.End)
		}
	}
	wantLosses := 0
	// Parallel pipelines each report their losses (context-parallel rank
	// 0) from the position of the last virtual stage; 1F1B-RR's
	// last-stage replicas gather theirs on replica 0.
	if want.Stage == c.position(c.Stages*c.Chunks-1) && want.TPRank == 0 && want.CPRank == 0 && (c.StageReplicas == nil || want.Replica == 0) {
		wantLosses = c.Warmup + c.Steps
	}
	if len(r.Losses) != wantLosses {
		return nil, fmt.Errorf("result.losses: want %d values for stage %d, got %d", wantLosses, want.Stage, len(r.Losses))
	}
	for i, l := range r.Losses {
		if !finiteNonNegative(l) {
			return nil, fmt.Errorf("result.losses[%d]: must be a finite number >= 0, got %v", i, l)
		}
	}
	return &r, nil
}

func finiteNonNegative(v float64) bool { return v >= 0 && !math.IsInf(v, 0) }
