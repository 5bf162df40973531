package results

import (
	"fmt"
	"strconv"

	"pipeplan/core/schedule"
)

// ScheduleRow is one schedule kind's analytic bubble against the simulator.
type ScheduleRow struct {
	Kind                      schedule.Kind
	Stages, Microbatches      int
	Chunks, Batches           int
	Args                      []string
	Analytic                  float64 // (p−1)/(v·m) or 0: the registry's closed form, over ideal compute
	HasAnalytic               bool
	SimulatedIdleOverBusy     float64 // device 0's idle / busy seconds in the simulated step(s)
	SimulatedIdleOverStepTime float64 // the simulator's bubble_fraction (idle / step time)
}

// scheduleCLIOutput is what `schedule --json` prints.
type scheduleCLIOutput struct {
	StepSeconds    float64 `json:"step_seconds"`
	BubbleFraction float64 `json:"bubble_fraction"`
	Devices        []struct {
		BusySeconds float64 `json:"busy_seconds"`
		IdleSeconds float64 `json:"idle_seconds"`
	} `json:"devices"`
}

// ScheduleSettings are the sizes the schedule table uses: p stages, m
// microbatches, v chunks (interleaved only; zb-v and dualpipe-v run two), batches for the kinds that
// run several batches without a flush.
var ScheduleSettings = []struct{ P, M, V, Batches int }{{4, 8, 2, 16}, {8, 32, 4, 16}}

// ScheduleRows simulates every kind with the CLI at ScheduleSettings
// (forward 1 s, backward 2 s, no communication) and reads the registry's
// closed-form bubble.
func ScheduleRows() ([]ScheduleRow, error) {
	var rows []ScheduleRow
	for _, set := range ScheduleSettings {
		for _, in := range schedule.Registry() {
			r := ScheduleRow{Kind: in.Kind, Stages: set.P, Microbatches: set.M, Chunks: 1, Batches: 1}
			if in.Chunked {
				r.Chunks = set.V
			}
			if in.VShaped {
				r.Chunks = schedule.VChunks // whatever --chunks says
			}
			if in.MultiBatch {
				r.Batches = set.Batches
			}
			r.Args = []string{"schedule", "--kind", string(in.Kind), "--stages", strconv.Itoa(set.P), "--microbatches", strconv.Itoa(set.M)}
			if in.Chunked {
				r.Args = append(r.Args, "--chunks", strconv.Itoa(r.Chunks))
			}
			if in.MultiBatch {
				r.Args = append(r.Args, "--batches", strconv.Itoa(r.Batches))
			}
			if in.Kind == schedule.OneFOneBRR {
				continue // needs replicas per stage; its bubble has no closed form either
			}
			var out scheduleCLIOutput
			if err := runJSON(&out, r.Args...); err != nil {
				return nil, err
			}
			d := out.Devices[0]
			r.SimulatedIdleOverBusy = d.IdleSeconds / d.BusySeconds
			r.SimulatedIdleOverStepTime = out.BubbleFraction
			if b, err := in.Kind.Bubble(set.P, set.M, r.Chunks); err == nil {
				r.Analytic, r.HasAnalytic = b, true
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// SchedulesMarkdown is the schedules section's table.
func SchedulesMarkdown() (string, error) {
	rows, err := ScheduleRows()
	if err != nil {
		return "", err
	}
	return commandTable(rows, []string{"kind", "p", "m", "v", "batches", "analytic bubble (registry)",
		"simulated idle / busy (device 0)", "simulated idle / step"}, func(r ScheduleRow) (string, []string) {
		an := "none"
		if r.HasAnalytic {
			an = fmt.Sprintf("%.4f", r.Analytic)
		}
		return command(r.Args...), []string{string(r.Kind), strconv.Itoa(r.Stages), strconv.Itoa(r.Microbatches), strconv.Itoa(r.Chunks),
			strconv.Itoa(r.Batches), an, fmt.Sprintf("%.4f", r.SimulatedIdleOverBusy), fmt.Sprintf("%.4f", r.SimulatedIdleOverStepTime)}
	}), nil
}
