package ui

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vugu/vugu"

	"pipeplan/app"
	"pipeplan/core/gavel"
)

// yieldEvery is how long a simulation runs before it lets the browser
// handle events and repaint: WebAssembly shares the page's one thread, so
// long work proceeds in slices and the page never freezes.
const yieldEvery = 40 * time.Millisecond

// SimView is the state of the Cluster page's trace simulation.
type SimView struct {
	// Running reports a simulation in progress; Done of Total jobs have completed.
	Running     bool
	Done, Total int
	// Result is the last finished simulation; nil before.
	Result *gavel.SimResult
	// Err says why the last simulation stopped early.
	Err string

	cancel context.CancelFunc
}

// ProgressText describes the running simulation.
func (v SimView) ProgressText() string {
	return fmt.Sprintf("simulating: %d of %d jobs completed", v.Done, v.Total)
}

// UseEventEnv lets background work (simulations) update the page: it
// takes env's lock to change the model and asks for a render when done.
func (a *App) UseEventEnv(env vugu.EventEnv) { a.env = env }

// StartSimulation simulates a trace on the Cluster page's inputs in the
// background, reporting progress; CancelSimulation stops it.
func (a *App) StartSimulation() {
	if a.Sim.Running || a.env == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	in := a.State.Cluster
	a.Sim = SimView{Running: true, Total: in.TraceJobs, cancel: cancel}
	env := a.env
	go func() {
		last := time.Now()
		done, total := 0, in.TraceJobs
		yield := func() {
			if time.Since(last) < yieldEvery {
				return
			}
			env.Lock()
			a.Sim.Done, a.Sim.Total = done, total
			env.UnlockRender()
			a.browser.Yield()
			last = time.Now()
		}
		a.browser.Yield() // show the running state first
		res, err := app.SimulateTrace(ctx, in, func(d, t int) {
			done, total = d, t
			yield()
		}, yield)
		env.Lock()
		defer env.UnlockRender()
		cancel()
		a.Sim.Running, a.Sim.cancel = false, nil
		if err != nil {
			a.Sim.Err = err.Error()
			return
		}
		a.Sim.Result = res
	}()
}

// CancelSimulation stops a running simulation.
func (a *App) CancelSimulation() {
	if a.Sim.cancel != nil {
		a.Sim.cancel()
	}
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
