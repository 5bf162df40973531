package ui

import (
	"context"
	"encoding/json"
	"fmt"

	"pipeplan/app"
	"pipeplan/app/request"
	"pipeplan/core/gavel"
	"pipeplan/core/model"
)

// Job is work the page hands to a Web Worker running this same program
// (DESIGN.md: work over ~100 ms runs off the UI thread), as JSON.
type Job struct {
	// Kind is JobPlan or JobSimulate.
	Kind string `json:"kind"`
	// Plan is the Plan page's request (JobPlan).
	Plan *request.Plan `json:"plan,omitempty"`
	// Profile is the uploaded layer profile the plan is for, if any: it
	// lives in the page, not in the request.
	Profile *model.Profile `json:"profile,omitempty"`
	// Cluster is the Cluster page's request (JobSimulate).
	Cluster *request.Cluster `json:"cluster,omitempty"`
}

// The kinds of Job.
const (
	JobPlan     = "plan"
	JobSimulate = "simulate"
)

// JobAnswer is a Job's result as the worker posts it back, as JSON.
type JobAnswer struct {
	// Plan is a JobPlan's result.
	Plan *app.Result `json:"plan,omitempty"`
	// Sim is a JobSimulate's result.
	Sim *gavel.SimResult `json:"sim,omitempty"`
	// Err says why there is no result ("" when there is one).
	Err string `json:"error,omitempty"`
}

// RunJob runs a Job given as JSON, reporting progress as (done, total) —
// a fraction of 1 for a plan, jobs completed of the trace for a simulation —
// and returns its JobAnswer as JSON. It is the Web Worker's whole work.
func RunJob(ctx context.Context, job []byte, progress func(done, total float64)) []byte {
	ans := runJob(ctx, job, progress)
	out, err := json.Marshal(ans)
	if err != nil {
		out, _ = json.Marshal(JobAnswer{Err: "encode the worker's answer: " + err.Error()})
	}
	return out
}

func runJob(ctx context.Context, data []byte, progress func(done, total float64)) JobAnswer {
	var job Job
	if err := json.Unmarshal(data, &job); err != nil {
		return JobAnswer{Err: "worker job: " + err.Error()}
	}
	switch {
	case job.Kind == JobPlan && job.Plan != nil:
		frac := func(f float64) { progress(f, 1) }
		var res app.Result
		var err error
		if job.Profile != nil {
			res, err = app.PlanProfile(ctx, *job.Profile, *job.Plan, frac)
		} else {
			res, err = app.PlanProgress(ctx, *job.Plan, frac)
		}
		if err != nil {
			return JobAnswer{Err: err.Error()}
		}
		return JobAnswer{Plan: &res}
	case job.Kind == JobSimulate && job.Cluster != nil:
		res, err := app.SimulateTrace(ctx, *job.Cluster, func(d, t int) { progress(float64(d), float64(t)) }, nil)
		if err != nil {
			return JobAnswer{Err: err.Error()}
		}
		return JobAnswer{Sim: res}
	}
	return JobAnswer{Err: fmt.Sprintf("worker job: kind %q without its request", job.Kind)}
}

// startJob runs job in a Web Worker when the page has one: progress and
// done run with the event environment locked. done re-renders the page;
// progress does too, unless it returns the one progress bar that moved,
// which is then set in place: a render of a page holding the last result
// costs its UI thread far more than the bar (vugu renders the whole page),
// and the answer waits behind it. It returns the worker's stop, or ok
// false when there is no worker (tests, a page without workers), for the
// caller to run the job in place.
func (a *App) startJob(job Job, progress func(done, total float64) *ProgressBar, done func(JobAnswer)) (stop func(), ok bool) {
	if a.env == nil {
		return nil, false
	}
	data, err := json.Marshal(job)
	if err != nil {
		return nil, false
	}
	env := a.env
	return a.browser.StartWorker(data, func(d, t float64) {
		go func() {
			env.Lock()
			bar := progress(d, t)
			if bar == nil {
				env.UnlockRender()
				return
			}
			if bar.ID != "" {
				a.browser.SetProgress(*bar)
			}
			env.UnlockOnly()
		}()
	}, func(answer []byte) {
		var ans JobAnswer
		if err := json.Unmarshal(answer, &ans); err != nil {
			ans = JobAnswer{Err: "the background worker's answer: " + err.Error()}
		}
		go func() {
			env.Lock()
			defer env.UnlockRender()
			done(ans)
		}()
	})
}
