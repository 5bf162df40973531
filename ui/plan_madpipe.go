package ui

import (
	"fmt"
	"strconv"
)

// madPipeSummary describes the MadPipe result's schedule.
func (c *PlanPage) madPipeSummary() []kv {
	r := c.App.Plan.Result
	mp := r.MadPipe
	cand := r.Candidates[0]
	return []kv{
		{"model", fmt.Sprintf("%s on %d × %s", r.Model, r.GPUs, r.GPU), "the application and the system"},
		{"period", secs(mp.PeriodSeconds) + " per minibatch", "the 1F1B* schedule's period found by the binary search on the target period (MadPipe Algorithm 1, §4.3)"},
		{"throughput", num(cand.SamplesPerSecond) + " samples/s", "minibatch / period"},
		{"stages", fmt.Sprintf("%d on %d GPUs", len(mp.Stages), len(mp.GPUMemoryBytes)), "contiguous layer ranges; the special GPU may hold several (§4.2)"},
		{"link", fmt.Sprintf("%.0f GB/s", mp.BandwidthBytesPerSec/1e9), "MadPipe assumes one bandwidth between every pair of GPUs: the slowest link the cluster's GPUs cross"},
	}
}

// madPipeStageRows lists the stages and the GPU each runs on.
func (c *PlanPage) madPipeStageRows() []tableRow {
	mp := c.App.Plan.Result.MadPipe
	out := make([]tableRow, len(mp.Stages))
	for i, s := range mp.Stages {
		gpu := strconv.Itoa(s.Processor)
		if s.Special {
			gpu += " (special)"
		}
		layers := strconv.Itoa(s.FirstLayer)
		if s.LastLayer != s.FirstLayer {
			layers += "–" + strconv.Itoa(s.LastLayer)
		}
		out[i] = tableRow{Index: i, Cells: []string{strconv.Itoa(i), layers, gpu, secs(s.ComputeSeconds), strconv.Itoa(s.Activations)}}
	}
	return out
}

// madPipeMemoryRows lists each GPU's peak memory against its capacity.
func (c *PlanPage) madPipeMemoryRows() []tableRow {
	r := c.App.Plan.Result
	out := make([]tableRow, len(r.MadPipe.GPUMemoryBytes))
	for i, m := range r.MadPipe.GPUMemoryBytes {
		out[i] = tableRow{Index: i, Cells: []string{strconv.Itoa(i), gib(m), gib(r.CapacityBytes)}}
	}
	return out
}

// showExport reports whether the header offers Export plan: on the Plan
// page, once it has a result (a MadPipe one says why it cannot be exported).
func (c *Root) showExport() bool {
	r := c.App.Plan.Result
	return c.App.State.Tab == "plan" && (r.Plan != nil || r.NoExport != "")
}

// exportTitle explains the Export button, or why the plan cannot be exported.
func (c *Root) exportTitle() string {
	if why := c.App.Plan.Result.NoExport; why != "" {
		return "Export unavailable: " + why
	}
	return "Download the selected plan as plan.json (core/plan schema) for the runner"
}
