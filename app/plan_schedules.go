package app

import (
	"slices"
	"strconv"
	"strings"

	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/launch"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// ScheduleOption is the selected configuration under one pipeline
// schedule: its degrees, microbatch and recomputation kept, the schedule
// (and, for the interleaved one, its chunks) changed.
type ScheduleOption struct {
	// Schedule is the kind (request.PTDPSchedules' names).
	Schedule schedule.Kind `json:"schedule"`
	// Interleave is the model chunks per device v of the interleaved
	// schedule: the plan's, or 2 where the plan has none (1 for the others).
	Interleave int `json:"interleave"`
	// Chunks is the model chunks each GPU holds (plan.Execution.Chunks:
	// the interleaved schedule's v, a V-shaped one's two), and VShaped
	// whether they sit in a V.
	Chunks  int  `json:"chunks"`
	VShaped bool `json:"v_shaped,omitempty"`
	// Selected reports whether this is the plan's own schedule.
	Selected bool `json:"selected,omitempty"`
	// Asynchronous reports a schedule without a flush, whose updates use
	// weights a step stale (2BW: schedule.KindInfo.Flushes).
	Asynchronous bool `json:"asynchronous,omitempty"`
	// IterationSeconds, TokensPerSec, BubbleSeconds and PeakBytes are the
	// prediction (cost.Prediction), PeakBytes the most loaded GPU's; Fits
	// whether that GPU's memory holds it.
	IterationSeconds float64 `json:"iteration_seconds,omitempty"`
	TokensPerSec     float64 `json:"tokens_per_sec,omitempty"`
	BubbleSeconds    float64 `json:"bubble_seconds,omitempty"`
	PeakBytes        float64 `json:"peak_bytes,omitempty"`
	Fits             bool    `json:"fits"`
	// Problem says why the configuration cannot run under the schedule
	// (the cost model's error); the prediction is then unset.
	Problem string `json:"problem,omitempty"`
	// Engines name the engines whose launch artifacts run the schedule
	// (launch.Engines); pipeplan's runner runs every one.
	Engines []string `json:"engines,omitempty"`
}

// comparedSchedules are the pipeline schedules the plan's configuration
// is compared under, in the order shown: the flushing ones, then 2BW.
var comparedSchedules = []schedule.Kind{schedule.GPipe, schedule.OneFOneB, schedule.Interleaved, schedule.ZBH1, schedule.ZBV, schedule.DualPipeV, schedule.TwoBW}

// scheduleOptions predicts cfg under each of comparedSchedules on tr and
// c with opt: which schedule to run the chosen configuration with. With
// one pipeline stage every schedule is the same, and there is nothing to
// compare (nil).
func scheduleOptions(tr model.Transformer, c hw.Cluster, cfg plan.Execution, opt cost.Options) []ScheduleOption {
	if cfg.PP < 2 {
		return nil
	}
	own := cost.WithDefaults(cfg).Schedule
	out := make([]ScheduleOption, 0, len(comparedSchedules))
	for _, k := range comparedSchedules {
		ex := cfg
		ex.Schedule, ex.Interleave = k, 1
		if k == schedule.Interleaved {
			ex.Interleave = max(cfg.Interleave, 2)
		}
		in, _ := k.Info()
		o := ScheduleOption{Schedule: k, Interleave: ex.Interleave, Chunks: ex.Chunks(), VShaped: in.VShaped, Selected: k == own, Asynchronous: !in.Flushes()}
		for _, en := range launch.Engines {
			if slices.Contains(en.Schedules, k) {
				o.Engines = append(o.Engines, en.Name)
			}
		}
		pr, err := cost.Predict(tr, c, ex, opt)
		if err != nil {
			o.Problem = err.Error()
		} else {
			o.IterationSeconds, o.TokensPerSec, o.BubbleSeconds = pr.IterationSeconds, pr.TokensPerSec, pr.Time.BubbleSeconds
			o.PeakBytes, o.Fits = pr.Memory.PeakBytes, pr.Memory.Fits()
		}
		out = append(out, o)
	}
	return out
}

// ChunksText says the model chunks a GPU holds: "1", "2", "2 in a V".
func (o ScheduleOption) ChunksText() string {
	if o.VShaped {
		return strconv.Itoa(o.Chunks) + " in a V"
	}
	return strconv.Itoa(o.Chunks)
}

// EnginesText lists the engines that run the schedule, pipeplan's runner
// (which runs every one) last.
func (o ScheduleOption) EnginesText() string {
	return strings.Join(append(slices.Clone(o.Engines), "runner"), ", ")
}

// Note says why the configuration cannot run under the schedule, or
// whether it fits and, without a flush, that its updates use stale
// weights.
func (o ScheduleOption) Note() string {
	if o.Problem != "" {
		return o.Problem
	}
	note := "fits"
	if !o.Fits {
		note = "does not fit"
	}
	if o.Asynchronous {
		note += "; no flush: updates use weights a step stale"
	}
	return note
}
