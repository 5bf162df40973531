package schedule

import (
	"fmt"
	"math"
)

// StageCost is the cost of one (virtual) stage for one microbatch.
type StageCost struct {
	// FwdSeconds is the forward-pass time.
	FwdSeconds float64 `json:"fwd_seconds"`
	// BwdSeconds is the whole backward-pass time (input and weight gradients).
	BwdSeconds float64 `json:"bwd_seconds"`
	// WgradSeconds is the weight-gradient part of BwdSeconds: the W action
	// of split schedules takes WgradSeconds and the I action the rest.
	WgradSeconds float64 `json:"wgrad_seconds"`
	// CommSeconds is the time to move this stage's output activation to the
	// next stage (and the gradient back), paid only between devices and
	// overlapped with computation.
	CommSeconds float64 `json:"comm_seconds"`
	// ActivationBytes is the memory stashed per in-flight microbatch.
	ActivationBytes float64 `json:"activation_bytes"`
	// WeightBytes is the memory of one weight version of the stage.
	WeightBytes float64 `json:"weight_bytes"`
}

// Costs are the inputs of the simulator besides the schedule.
type Costs struct {
	// Stages holds one cost per (virtual) stage, or one entry for all stages.
	Stages []StageCost `json:"stages"`
	// AllReduceSeconds is the time of one REDUCE_GRAD action.
	AllReduceSeconds float64 `json:"all_reduce_seconds"`
	// OptStepSeconds is the time of one OPT_STEP action.
	OptStepSeconds float64 `json:"opt_step_seconds"`
}

// Uniform returns costs with the same forward, backward, weight-gradient
// and communication times for every stage and no memory sizes (peak
// activation and version counts are still reported).
func Uniform(fwdSeconds, bwdSeconds, wgradSeconds, commSeconds float64) Costs {
	return Costs{Stages: []StageCost{{FwdSeconds: fwdSeconds, BwdSeconds: bwdSeconds, WgradSeconds: wgradSeconds, CommSeconds: commSeconds}}}
}

// validate checks the costs against a schedule with the given stage count.
func (c Costs) validate(stages int) error {
	if len(c.Stages) != 1 && len(c.Stages) != stages {
		return fmt.Errorf("costs.stages: must have 1 or %d entries, got %d", stages, len(c.Stages))
	}
	for i, st := range c.Stages {
		for _, f := range []struct {
			name string
			v    float64
		}{{"fwd_seconds", st.FwdSeconds}, {"bwd_seconds", st.BwdSeconds}, {"wgrad_seconds", st.WgradSeconds},
			{"comm_seconds", st.CommSeconds}, {"activation_bytes", st.ActivationBytes}, {"weight_bytes", st.WeightBytes}} {
			if !(f.v >= 0) || math.IsInf(f.v, 0) {
				return fmt.Errorf("costs.stages[%d].%s: must be finite and >= 0, got %v", i, f.name, f.v)
			}
		}
		if st.WgradSeconds > st.BwdSeconds {
			return fmt.Errorf("costs.stages[%d].wgrad_seconds: must be <= bwd_seconds (%v), got %v", i, st.BwdSeconds, st.WgradSeconds)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"all_reduce_seconds", c.AllReduceSeconds}, {"opt_step_seconds", c.OptStepSeconds}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("costs.%s: must be finite and >= 0, got %v", f.name, f.v)
		}
	}
	return nil
}

// stage returns the cost of stage s (validated costs only).
func (c Costs) stage(s int) StageCost {
	if len(c.Stages) == 1 {
		return c.Stages[0]
	}
	return c.Stages[s]
}

// duration returns how long an action occupies its device. Sends and
// receives take no device time: the transfer is the latency CommSeconds
// on the edge between stages.
func (c Costs) duration(a Action) float64 {
	switch a.Kind {
	case Forward:
		return c.stage(a.Stage).FwdSeconds
	case Backward:
		return c.stage(a.Stage).BwdSeconds
	case BackwardInput:
		st := c.stage(a.Stage)
		return st.BwdSeconds - st.WgradSeconds
	case BackwardWeight:
		return c.stage(a.Stage).WgradSeconds
	case AllReduce:
		return c.AllReduceSeconds
	case OptStep:
		return c.OptStepSeconds
	}
	return 0
}
