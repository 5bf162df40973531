package plan

import (
	"strings"
	"testing"

	"pipeplan/core/schedule"
)

// validExecution is a consistent execution: 2·2·2 GPUs, m = 16/(2·2) = 4.
func validExecution() Execution {
	return Execution{TP: 2, PP: 2, DP: 2, Interleave: 1, CP: 1, EP: 1, MicrobatchSize: 2, GlobalBatch: 16,
		Recompute: "none", Schedule: schedule.OneFOneB}
}

// Every kind of the schedule registry is a valid execution schedule, and
// only the chunked ones take interleaving: a kind added to the registry
// reaches validation without touching this package.
func TestExecutionScheduleFromRegistry(t *testing.T) {
	for _, in := range schedule.Registry() {
		e := validExecution()
		e.Schedule = in.Kind
		if err := e.Validate(); err != nil {
			t.Errorf("%s: %v", in.Kind, err)
		}
		e.Interleave = 2
		if err := e.Validate(); (err == nil) != in.Chunked {
			t.Errorf("%s (chunked %v) with interleave 2: error %v", in.Kind, in.Chunked, err)
		}
	}
	e := validExecution()
	e.Schedule = "zigzag"
	err := e.Validate()
	if err == nil || !strings.Contains(err.Error(), `execution.schedule: must be one of `+schedule.KindList(", ")+`, got "zigzag"`) {
		t.Errorf("unknown kind: error %v", err)
	}
}
