package ui

import (
	"fmt"

	"pipeplan/app"
)

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

// Launch is the selected plan's artifact for the chosen engine
// (App.LaunchFormat, else the first), and false when the plan has none.
func (a *App) Launch() (app.LaunchArtifact, bool) {
	arts := a.Plan.Result.Launch
	for _, l := range arts {
		if l.Format == a.LaunchFormat {
			return l, true
		}
	}
	if len(arts) == 0 {
		return app.LaunchArtifact{}, false
	}
	return arts[0], true
}

// SetLaunchFormat chooses the engine whose launch artifact is shown.
func (a *App) SetLaunchFormat(format string) {
	a.LaunchFormat, a.LaunchStatus = format, ""
}

// CopyLaunch copies the shown launch artifact to the clipboard.
func (a *App) CopyLaunch() {
	l, ok := a.Launch()
	switch {
	case !ok:
		a.LaunchStatus = "there is no plan to launch"
	case l.Text == "":
		a.LaunchStatus = "nothing to copy: " + l.Problem
	default:
		if err := a.browser.CopyText(l.Text); err != nil {
			a.LaunchStatus = fmt.Sprintf("could not copy (%v): select the text below", err)
			return
		}
		a.LaunchStatus = l.Title + " copied"
	}
}
