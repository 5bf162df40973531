package schedule

// Report is the JSON form of a timeline shared by the CLI and the browser.
type Report struct {
	Kind           Kind           `json:"kind"`
	Stages         int            `json:"stages"`
	Chunks         int            `json:"chunks"`
	Microbatches   int            `json:"microbatches"`
	Batches        int            `json:"batches"`
	StepSeconds    float64        `json:"step_seconds"`
	BubbleFraction float64        `json:"bubble_fraction"`
	Devices        []DeviceReport `json:"devices"`
}

// DeviceReport is one device of a Report.
type DeviceReport struct {
	Device             int        `json:"device"`
	BusySeconds        float64    `json:"busy_seconds"`
	IdleSeconds        float64    `json:"idle_seconds"`
	BubbleFraction     float64    `json:"bubble_fraction"`
	PeakActivations    int        `json:"peak_activations"`
	PeakWeightVersions int        `json:"peak_weight_versions"`
	PeakMemoryBytes    float64    `json:"peak_memory_bytes"`
	Ops                []OpReport `json:"ops"`
}

// OpReport is one action of a DeviceReport; times are seconds since the
// step started.
type OpReport struct {
	Action     string  `json:"action"`
	Kind       string  `json:"kind"`
	Stage      int     `json:"stage"`
	Microbatch int     `json:"microbatch"`
	Chunk      int     `json:"chunk"`
	Version    int     `json:"version"`
	Start      float64 `json:"start"`
	End        float64 `json:"end"`
}

// Report returns the timeline's JSON form.
func (t *Timeline) Report() Report {
	r := Report{Kind: t.Kind, Stages: t.Stages, Chunks: t.Chunks, Microbatches: t.Microbatches, Batches: t.Batches,
		StepSeconds: t.StepSeconds, BubbleFraction: t.BubbleFraction, Devices: make([]DeviceReport, len(t.Ops))}
	for d, ops := range t.Ops {
		st := t.Devices[d]
		dr := DeviceReport{Device: d, BusySeconds: st.BusySeconds, IdleSeconds: st.IdleSeconds, BubbleFraction: st.BubbleFraction,
			PeakActivations: st.PeakActivations, PeakWeightVersions: st.PeakWeightVersions, PeakMemoryBytes: st.PeakMemoryBytes,
			Ops: make([]OpReport, len(ops))}
		for i, o := range ops {
			dr.Ops[i] = OpReport{Action: o.Action.String(), Kind: o.Kind.String(), Stage: o.Stage, Microbatch: o.Microbatch, Chunk: o.Chunk,
				Version: o.UsedVersion, Start: o.StartSeconds - t.StartSeconds, End: o.EndSeconds - t.StartSeconds}
		}
		r.Devices[d] = dr
	}
	return r
}
