package ui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/vugu/vugu"

	"pipeplan/core/gavel"
)

// SimView is the state of the Cluster page's trace simulation.
type SimView struct {
	// Running reports a simulation in progress; Done of Total jobs have completed.
	Running     bool
	Done, Total int
	// Result is the last finished simulation; nil before.
	Result *gavel.SimResult
	// Err says why the last simulation stopped early.
	Err string

	stop func() // stops the worker running the simulation
}

// ProgressText describes the running simulation.
func (v SimView) ProgressText() string {
	return fmt.Sprintf("simulating: %d of %d jobs completed", v.Done, v.Total)
}

// UseEventEnv lets work in the Web Worker update the page: it takes
// env's lock to change the model and asks for a render when done.
func (a *App) UseEventEnv(env vugu.EventEnv) { a.env = env }

// StartSimulation simulates a trace on the Cluster page's inputs in a Web
// Worker, reporting progress; CancelSimulation stops it at once.
func (a *App) StartSimulation() {
	if a.Sim.Running {
		return
	}
	in := a.State.Cluster
	a.simRun++
	run := a.simRun
	stop, ok := a.startJob(Job{Kind: JobSimulate, Cluster: &in}, func(done, total float64) *ProgressBar {
		if a.simRun == run && a.Sim.Running {
			a.Sim.Done, a.Sim.Total = int(done), int(total)
		}
		return nil // the bar and the text beside it: a render
	}, func(ans JobAnswer) {
		if a.simRun != run {
			return
		}
		a.Sim = SimView{Result: ans.Sim, Err: ans.Err}
		if ans.Sim == nil && ans.Err == "" {
			a.Sim.Err = "the simulation returned no result"
		}
	})
	if !ok {
		a.Sim.Err = "simulation needs a Web Worker, which this page could not start"
		return
	}
	a.Sim = SimView{Running: true, Total: in.TraceJobs, stop: stop}
}

// CancelSimulation stops a running simulation; the page says so at once.
func (a *App) CancelSimulation() {
	if !a.Sim.Running {
		return
	}
	a.Sim.stop()
	a.simRun++ // an answer already on its way is dropped
	a.Sim = SimView{Err: "simulation cancelled"}
}

// traceMixShown is how many job types traceMix names.
const traceMixShown = 6

// traceMix says how many of the simulated jobs were of each job type and
// scale factor, most frequent first (ties by name), naming at most
// traceMixShown of them.
func traceMix(jobs []gavel.JobOutcome) string {
	counts := map[string]int{}
	for _, j := range jobs {
		counts[fmt.Sprintf("%s ×%d", j.JobType, j.ScaleFactor)]++
	}
	types := make([]string, 0, len(counts))
	for t := range counts {
		types = append(types, t)
	}
	slices.SortFunc(types, func(a, b string) int { return cmp.Or(counts[b]-counts[a], strings.Compare(a, b)) })
	var parts []string
	for _, t := range types[:min(len(types), traceMixShown)] {
		parts = append(parts, fmt.Sprintf("%s: %d", t, counts[t]))
	}
	if more := len(types) - traceMixShown; more > 0 {
		parts = append(parts, fmt.Sprintf("%d more types", more))
	}
	return strings.Join(parts, ", ")
}
