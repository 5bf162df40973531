package ui

// runnerCommand is how the companion runner executes an exported plan.
const runnerCommand = "go run ./runner plan.json"

// ExportPlan downloads the selected plan as plan.json (the core/plan schema)
// and shows the command that runs it.
func (a *App) ExportPlan() {
	a.CopyStatus = ""
	a.ExportCommand = ""
	if a.Plan.Running {
		a.Err = "Export plan: the planner is still running; export when it has finished."
		return
	}
	p := a.Plan.Result.Plan
	if p == nil && a.Plan.Result.NoExport != "" {
		a.Err = "Export plan: " + a.Plan.Result.NoExport
		return
	}
	if p == nil {
		a.Err = "Export plan: there is no plan to export (see the Plan page for why)."
		return
	}
	data, err := p.Marshal()
	if err != nil {
		a.Err = "Export plan: " + err.Error()
		return
	}
	if err := a.browser.Download("plan.json", "application/json", data); err != nil {
		a.Err = "Export plan: " + err.Error()
		return
	}
	a.ExportCommand = runnerCommand
}
