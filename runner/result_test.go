package main

import (
	"math"
	"strings"
	"testing"

	"pipeplan/core/schedule"
)

// resultConfig is a 2-stage GPipe run of 2 microbatches, 2 measured steps
// after 1 warmup step.
var resultConfig = func() *runConfig {
	s, err := schedule.Generate(schedule.GPipe, schedule.Options{Stages: 2, Microbatches: 2})
	if err != nil {
		panic(err)
	}
	return &runConfig{Stages: 2, Chunks: 1, ChunkPositions: []int{0, 1}, Microbatches: 2, Steps: 2, Warmup: 1, schedule: s}
}()

func TestParseResult(t *testing.T) {
	last := rankInfo{Rank: 3, Stage: 1, Replica: 1}
	good := `{"rank":3,"stage":1,"replica":1,"step_seconds":[0.5,0.25],"losses":[3,2,1],"peak_memory_bytes":1e9,"torch_version":"1.13.0",` +
		`"actions":[{"kind":"F","stage":1,"chunk":0,"microbatch":0,"step":1,"start":0.125,"end":0.25}],"weight_versions":1,"parameter_bytes":800,"optimizer_state_bytes":400}`
	r, err := parseResult([]byte(good), last, resultConfig)
	if err != nil {
		t.Fatal(err)
	}
	if r.StepSeconds[1] != 0.25 || r.Losses[2] != 1 || r.PeakMemoryBytes != 1e9 || len(r.Actions) != 1 || r.Actions[0].End != 0.25 || r.OptimizerStateBytes != 400 {
		t.Errorf("parsed %+v", r)
	}
	cases := []struct{ name, data, want string }{
		{"not json", `{`, "result: unexpected EOF"},
		{"unknown field", `{"rank":3,"bogus":1}`, `unknown field "bogus"`},
		{"trailing", good + `{}`, "trailing data"},
		{"wrong rank", strings.Replace(good, `"rank":3`, `"rank":2`, 1), "rank/stage/replica/tp_rank: want 3/1/1/0, got 2/1/1/0"},
		{"steps", strings.Replace(good, `[0.5,0.25]`, `[0.5]`, 1), "result.step_seconds: want 2 steps, got 1"},
		{"negative time", strings.Replace(good, `[0.5,0.25]`, `[0.5,-1]`, 1), "result.step_seconds[1]: must be a finite number >= 0, got -1"},
		{"memory", strings.Replace(good, `1e9`, `-3`, 1), "result.peak_memory_bytes: must be a finite number >= 0, got -3"},
		{"losses", strings.Replace(good, `[3,2,1]`, `[3,2]`, 1), "result.losses: want 3 values for stage 1, got 2"},
		{"action ends first", strings.Replace(good, `"start":0.125`, `"start":0.5`, 1), "result.actions[0]: start 0.5 and end 0.25 must be finite with 0 <= start <= end"},
		{"versions", strings.Replace(good, `"weight_versions":1`, `"weight_versions":0`, 1), "result.weight_versions: must be >= 1, got 0"},
		{"state", strings.Replace(good, `"optimizer_state_bytes":400`, `"optimizer_state_bytes":-4`, 1), "optimizer_state_bytes: must be finite numbers >= 0, got 800, -4"},
		{"huge", strings.Replace(good, `1e9`, `1e400`, 1), "result: json: cannot unmarshal number 1e400"},
	}
	for _, tc := range cases {
		_, err := parseResult([]byte(tc.data), last, resultConfig)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	first := `{"rank":0,"stage":0,"replica":0,"step_seconds":[1,1],"losses":[],"peak_memory_bytes":0,"torch_version":"2.5","weight_versions":3}`
	if _, err := parseResult([]byte(first), rankInfo{}, resultConfig); err != nil {
		t.Errorf("a first-stage result without losses: %v", err)
	}
}

// FuzzParseResult: worker output is outside input; parsing never panics and
// an accepted result is fully checked.
func FuzzParseResult(f *testing.F) {
	f.Add([]byte(`{"rank":3,"stage":1,"replica":1,"step_seconds":[0.5,0.25],"losses":[3,2,1],"peak_memory_bytes":1e9,"torch_version":"1.13.0","weight_versions":1}`))
	f.Add([]byte(`{"rank":0,"stage":0,"replica":0,"step_seconds":[1,1],"losses":[],"peak_memory_bytes":0,"weight_versions":2,"actions":[{"kind":"B","start":1,"end":1e308}]}`))
	f.Add([]byte(`{"rank":0,"stage":0,"replica":0,"step_seconds":[1,1],"losses":[],"peak_memory_bytes":0,"torch_version":""}`))
	f.Add([]byte(`{"rank":3,"stage":1,"replica":1,"step_seconds":[NaN],"losses":null}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"rank":0,"stage":0,"replica":0,"step_seconds":[1,1],"losses":[],"peak_memory_bytes":0,"torch_version":"",` +
		`"actions":[{"kind":"F","stage":0,"chunk":0,"microbatch":0,"step":1,"start":0,"end":0.1},{"kind":"F","stage":0,"chunk":0,"microbatch":1,"step":1,"start":0.1,"end":0.2},` +
		`{"kind":"B","stage":0,"chunk":0,"microbatch":0,"step":1,"start":0.5,"end":0.7},{"kind":"B","stage":0,"chunk":0,"microbatch":1,"step":1,"start":0.7,"end":0.9},` +
		`{"kind":"OPT_STEP","stage":0,"chunk":0,"microbatch":-1,"step":1,"start":0.9,"end":0.95}]}`))
	f.Add([]byte(`{"rank":0,"stage":0,"replica":0,"step_seconds":[1,1],"losses":[],"peak_memory_bytes":0,"actions":[{}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, want := range []rankInfo{{}, {Rank: 3, Stage: 1, Replica: 1}} {
			r, err := parseResult(data, want, resultConfig)
			if err != nil {
				continue
			}
			if len(r.StepSeconds) != resultConfig.Steps || !finiteNonNegative(r.PeakMemoryBytes) {
				t.Fatalf("accepted an invalid result %+v", r)
			}
			for _, a := range r.Actions {
				if !(0 <= a.Start && a.Start <= a.End && !math.IsInf(a.End, 0)) {
					t.Fatalf("accepted a bad action %+v", a)
				}
			}
			for _, v := range append(r.StepSeconds, r.Losses...) {
				if !finiteNonNegative(v) {
					t.Fatalf("accepted a bad value %v in %+v", v, r)
				}
			}
			// The per-stage report checks the action records.
			steps, err := stepActions(r, resultConfig, true)
			if err != nil {
				continue
			}
			for _, recs := range steps {
				if recs != nil && len(recs) != 4 {
					t.Fatalf("accepted a step of %d compute actions (the list has 4)", len(recs))
				}
				for _, a := range recs {
					if !finiteNonNegative(a.Start) || a.End < a.Start || a.Stage != want.Stage {
						t.Fatalf("accepted a bad action record %+v", a)
					}
				}
			}
		}
	})
}
