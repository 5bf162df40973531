package request

import (
	"slices"

	"pipeplan/core/schedule"
)

// Schedule asks for one pipeline schedule of equal stages to be simulated:
// the body of POST /api/v1/schedule (the CLI's "schedule" command offers
// more knobs).
type Schedule struct {
	// Kind is one of ScheduleKinds.
	Kind string `json:"kind"`
	// Stages is the number of pipeline stages p, one per device.
	Stages int `json:"stages"`
	// Microbatches is the number of microbatches per batch m.
	Microbatches int `json:"microbatches"`
	// Chunks is the model chunks per device v (interleaved only; the
	// V-shaped zb-v and dualpipe-v always place two).
	Chunks int `json:"chunks"`
	// FwdSeconds and BwdSeconds are one microbatch's forward and backward
	// time on one device's layers (interleaved chunks take 1/v of them,
	// a V's two chunks half).
	FwdSeconds float64 `json:"fwd_seconds"`
	BwdSeconds float64 `json:"bwd_seconds"`
	// CommSeconds is the time to move an activation or gradient between devices.
	CommSeconds float64 `json:"comm_seconds"`
}

// ScheduleKinds are the kinds a Schedule request takes: those generated
// from stages, microbatches and chunks alone (1f1b-rr needs replicas and
// 1f1b-star a period, which the CLI takes).
var ScheduleKinds = []schedule.Kind{schedule.GPipe, schedule.OneFOneB, schedule.Interleaved, schedule.TwoBW, schedule.PipeDream, schedule.ZBH1, schedule.ZBV, schedule.DualPipeV}

// Limits of a Schedule request: a timeline a page can draw.
const (
	MaxStages          = 64
	MaxMicrobatches    = 512
	MaxChunks          = 8
	MaxScheduleSeconds = 1e6
	// MaxScheduleTasks bounds stages × microbatches × chunks (chunks
	// counting for the interleaved kind only), the (virtual stage,
	// microbatch) tasks simulated and reported one by one: each is a
	// forward and a backward of ~220 bytes of JSON. At the three limits
	// above (262,144 tasks) the answer was 58 MB of JSON, 1.3 s of CPU and
	// 300 MB; at this one 14 MB, about 0.35 s and 80 MB (BENCHMARKS.md,
	// "Worst cases").
	MaxScheduleTasks = 1 << 16
)

// Tasks is the schedule's (virtual stage, microbatch) pairs: stages ×
// microbatches × its chunks per device (taskChunks).
func (s Schedule) Tasks() int { return s.Stages * s.Microbatches * s.taskChunks() }

// taskChunks is the model chunks per device the kind runs: Chunks for the
// interleaved kind, schedule.VChunks for a V-shaped one (zb-v, dualpipe-v), one for
// the others (which ignore Chunks).
func (s Schedule) taskChunks() int {
	if schedule.Kind(s.Kind) == schedule.Interleaved {
		return s.Chunks
	}
	if in, err := schedule.Kind(s.Kind).Info(); err == nil && in.VShaped {
		return schedule.VChunks
	}
	return 1
}

// DefaultSchedule is 1F1B on 4 stages and 8 microbatches, the backward
// twice the forward (§4.2.1).
func DefaultSchedule() Schedule {
	return Schedule{Kind: string(schedule.OneFOneB), Stages: 4, Microbatches: 8, Chunks: 2, FwdSeconds: 1, BwdSeconds: 2}
}

// Validate checks the request; errors name the field and value.
func (s Schedule) Validate() error {
	if !slices.Contains(ScheduleKinds, schedule.Kind(s.Kind)) {
		return fieldErr("kind", "must be one of %v, got %q", ScheduleKinds, clip(s.Kind))
	}
	for _, f := range []struct {
		name      string
		v, lo, hi int
	}{{"stages", s.Stages, 1, MaxStages}, {"microbatches", s.Microbatches, 1, MaxMicrobatches}, {"chunks", s.Chunks, 1, MaxChunks}} {
		if err := intIn(f.name, f.v, f.lo, f.hi); err != nil {
			return err
		}
	}
	if n := s.Tasks(); n > MaxScheduleTasks {
		return fieldErr("microbatches", "%s stages × %s microbatches%s is %s tasks to simulate, over the limit of %s: use fewer microbatches (at most %s here)",
			group(s.Stages), group(s.Microbatches), chunksPart(s), group(n), group(MaxScheduleTasks), group(MaxScheduleTasks/(n/s.Microbatches)))
	}
	for _, f := range []struct {
		name string
		v    float64
		zero bool
	}{{"fwd_seconds", s.FwdSeconds, false}, {"bwd_seconds", s.BwdSeconds, false}, {"comm_seconds", s.CommSeconds, true}} {
		if !(f.v > 0 || f.zero && f.v == 0) || f.v > MaxScheduleSeconds {
			lo := "(0"
			if f.zero {
				lo = "[0"
			}
			return fieldErr(f.name, "must be in %s, %g] seconds, got %v", lo, float64(MaxScheduleSeconds), f.v)
		}
	}
	return nil
}

// chunksPart is " × v chunks" for a schedule of v > 1 chunks per device, else "".
func chunksPart(s Schedule) string {
	if v := s.taskChunks(); v > 1 {
		return " × " + group(v) + " chunks"
	}
	return ""
}

// DecodeSchedule decodes and validates a JSON Schedule; fields it omits
// keep DefaultSchedule's values.
func DecodeSchedule(data []byte) (Schedule, error) {
	s := DefaultSchedule()
	if err := decodeStrict(data, MaxBodyBytes, "", &s); err != nil {
		return s, err
	}
	return s, s.Validate()
}

// DecodeCluster decodes and validates a JSON Cluster (the Cluster page's
// inputs, the body of POST /api/v1/gavel/simulate); fields it omits keep
// DefaultCluster's values.
func DecodeCluster(data []byte) (Cluster, error) {
	c := DefaultCluster()
	if err := decodeStrict(data, MaxBodyBytes, "cluster", &c); err != nil {
		return c, err
	}
	return c, c.Validate()
}
