package plan

import (
	"bytes"
	"fmt"
	"slices"

	"pipeplan/core/model"
	"pipeplan/core/schedule"
)

// planV1 is the version-1 schema: degrees, schedule and recomputation in
// three objects, the microbatch count stored rather than derived.
type planV1 struct {
	Version     int           `json:"version"`
	Planner     string        `json:"planner"`
	Model       Model         `json:"model"`
	Cluster     Cluster       `json:"cluster"`
	Parallelism parallelismV1 `json:"parallelism"`
	Stages      []Stage       `json:"stages"`
	Schedule    scheduleV1    `json:"schedule"`
	Recompute   string        `json:"recompute"`
	Predictions Predictions   `json:"predictions"`
}

// parallelismV1 is version 1's "parallelism" object.
type parallelismV1 struct {
	TP         int `json:"tp"`
	PP         int `json:"pp"`
	DP         int `json:"dp"`
	Interleave int `json:"interleave"`
}

// scheduleV1 is version 1's "schedule" object.
type scheduleV1 struct {
	Kind           string `json:"kind"`
	Microbatches   int    `json:"microbatches"`
	MicrobatchSize int    `json:"microbatch_size"`
	GlobalBatch    int    `json:"global_batch"`
}

// parseV1 decodes a version-1 plan strictly and converts it to the current
// schema (the caller validates the result):
//
//   - parallelism, schedule and recompute become the execution (cp = ep = 1);
//   - the stored microbatch count m must equal B/(d·b), or, when every
//     stage has the same r > 1 replicas, B/(d·r·b): the replicas are then
//     data parallelism and fold into execution.dp (the runner ran d·r
//     pipelines either way);
//   - PipeDream plans stored B as the input stage's samples in parallel
//     and m as the inputs in flight (NOAM): B becomes d·b·m.
//
// A plan whose m fits none of these is an error naming the values.
func parseV1(data []byte) (*Plan, error) {
	var v planV1
	if err := decodeStrict(bytes.NewReader(data), &v); err != nil {
		return nil, fmt.Errorf("plan (version 1): %w", err)
	}
	e := Execution{
		TP: v.Parallelism.TP, PP: v.Parallelism.PP, DP: v.Parallelism.DP, Interleave: v.Parallelism.Interleave,
		CP: 1, EP: 1, MicrobatchSize: v.Schedule.MicrobatchSize, GlobalBatch: v.Schedule.GlobalBatch,
		Recompute: model.Recompute(v.Recompute), Schedule: schedule.Kind(v.Schedule.Kind),
	}
	stages := slices.Clone(v.Stages)
	m := v.Schedule.Microbatches
	if m < 1 {
		return nil, fmt.Errorf("schedule.microbatches: must be >= 1, got %d", m)
	}
	if e.Microbatches() != m {
		r := 0
		if len(stages) > 0 {
			r = stages[0].Replicas
		}
		for _, s := range stages {
			if s.Replicas != r {
				r = 0
			}
		}
		folded := e
		folded.DP *= r
		switch {
		case r > 1 && folded.Microbatches() == m:
			e = folded
			for i := range stages {
				stages[i].Replicas = 1
			}
		case v.Planner == "pipedream":
			e.GlobalBatch = e.DP * e.MicrobatchSize * m
		default:
			return nil, fmt.Errorf("schedule.microbatches: version-1 plan stores %d microbatches, but global_batch %d / (dp %d × microbatch_size %d) gives %d",
				m, e.GlobalBatch, e.DP, e.MicrobatchSize, e.Microbatches())
		}
	}
	return &Plan{Version: Version, Planner: v.Planner, Model: v.Model, Cluster: v.Cluster,
		Execution: e, Stages: stages, Predictions: v.Predictions}, nil
}
