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

// TestExecutionCPComm: the three modelled context-parallel communication
// types and "" validate; a2a+p2p is refused as not modelled, anything
// else with the field and the value.
func TestExecutionCPComm(t *testing.T) {
	for _, c := range CPComms {
		e := validExecution()
		e.CPComm = c
		if err := e.Validate(); err != nil {
			t.Errorf("cp_comm %q: %v", c, err)
		}
	}
	for in, want := range map[string]string{
		"a2a+p2p":   `execution.cp_comm: hierarchical context parallelism "a2a+p2p" is not modelled yet`,
		"allgather": `execution.cp_comm: must be one of "p2p", "all_gather", "a2a", got "allgather"`,
	} {
		e := validExecution()
		e.CPComm = in
		if err := e.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("cp_comm %q: error %v, want %q", in, err, want)
		}
	}
}

// TestExecutionExpertTP: ExpertTP resolves the default (1 with expert
// parallelism, t without) and Validate requires etp·ep to divide the
// t·cp·d ranks the experts fold over, naming the field.
func TestExecutionExpertTP(t *testing.T) {
	e := validExecution() // t 2, cp 1, d 2: 4 ranks a stage
	if got := e.ExpertTP(); got != 2 {
		t.Errorf("ep 1, etp unset: ExpertTP %d, want t = 2", got)
	}
	e.EP = 2
	if got := e.ExpertTP(); got != 1 {
		t.Errorf("ep 2, etp unset: ExpertTP %d, want 1", got)
	}
	e.ETP = 2
	if err := e.Validate(); err != nil || e.ExpertTP() != 2 {
		t.Errorf("ep 2, etp 2 on 4 ranks: ExpertTP %d, error %v", e.ExpertTP(), err)
	}
	e.EP = 4
	want := "execution.etp: expert tensor parallelism 2 × expert parallelism 4 = 8 must divide tp × cp × dp = 4 ranks"
	if err := e.Validate(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ep 4, etp 2 on 4 ranks: error %v, want %q", err, want)
	}
	e.EP, e.ETP = 1, -1
	if err := e.Validate(); err == nil || !strings.Contains(err.Error(), "execution.etp: must be 0 (the default) to 32768, got -1") {
		t.Errorf("etp -1: error %v", err)
	}
}
