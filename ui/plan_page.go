package ui

import (
	"context"
	"fmt"
	"strconv"

	"pipeplan/ui/engine"
	"pipeplan/ui/state"
)

// PlanPage is the Plan page: model, cluster and training inputs on the left,
// the ranked candidates, memory bars, timeline and stage map on the right.
type PlanPage struct {
	// App is the shared application model.
	App *App
}

// option is one entry of a select.
type option struct{ ID, Name string }

func (c *PlanPage) models() []option {
	var out []option
	for _, m := range engine.Models() {
		out = append(out, option{m.ID, m.Name})
	}
	return out
}

func (c *PlanPage) gpus() []option {
	var out []option
	for _, g := range engine.GPUs() {
		out = append(out, option{g.ID, g.Name})
	}
	return out
}

func (c *PlanPage) planners() []option {
	names := map[string]string{
		"best": "Best overall", "ptdp": "PTD-P (Megatron)", "2bw": "PipeDream-2BW",
		"pipedream": "PipeDream", "madpipe": "MadPipe",
	}
	var out []option
	for _, id := range state.Planners {
		out = append(out, option{id, names[id]})
	}
	return out
}

func (c *PlanPage) maxNodes() int       { return state.MaxNodes }
func (c *PlanPage) maxGPUsPerNode() int { return state.MaxGPUsPerNode }

// PlanView is the Plan page's latest result as the components show it.
type PlanView struct {
	// Result is the planner's answer; zero when Err is set.
	Result engine.Result
	// Err says why there is no plan ("" when there is one).
	Err string
	// Millis is how long the last re-plan took in the page, in ms.
	Millis float64
}

// TimingText reports how long the last plan took, or that it is pending.
func (v PlanView) TimingText() string {
	if v.Millis == 0 && v.Err == "" && v.Result.Model == "" {
		return "planning…"
	}
	return fmt.Sprintf("planned in %.1f ms", v.Millis)
}

// SetPlanInput sets one Plan-page input from its text form; a malformed
// value is shown as an error and leaves the state unchanged.
func (a *App) SetPlanInput(field, value string) {
	p := a.State.Plan
	p.Selected = 0 // a new input gives a new ranking
	var err error
	switch field {
	case "model":
		p.Model = value
	case "gpu":
		p.GPU = value
	case "planner":
		p.Planner = value
	case "nodes":
		p.Nodes, err = strconv.Atoi(value)
	case "gpus_per_node":
		p.GPUsPerNode, err = strconv.Atoi(value)
	case "selected":
		p.Selected, err = strconv.Atoi(value)
	case "global_batch":
		p.GlobalBatch, err = strconv.Atoi(value)
	case "inter_node_gbps":
		p.InterNodeGBps, err = strconv.ParseFloat(value, 64)
	default:
		err = fmt.Errorf("unknown input")
	}
	next := a.State
	next.Plan = p
	if err == nil {
		err = next.Validate()
	}
	if err != nil {
		a.Err = fmt.Sprintf("plan.%s: %q is not a valid value (%v)", field, value, err)
		return
	}
	a.State = next
	a.changed()
}

// replan runs the planner on the current inputs.
func (a *App) replan() {
	start := a.browser.NowMillis()
	res, err := engine.Plan(context.Background(), a.State.Plan)
	a.Plan = PlanView{Result: res}
	if err != nil {
		a.Plan.Err = err.Error()
	}
	a.Plan.Millis = a.browser.NowMillis() - start
}
