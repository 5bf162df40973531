package ui

import (
	"context"
	"sync"
	"testing"
	"time"
)

// workerBrowser is a fakeBrowser with a Web Worker the test drives: it
// keeps the job's callbacks and reports progress bars set in place.
type workerBrowser struct {
	fakeBrowser
	job      []byte
	progress func(done, total float64)
	done     func(answer []byte)
	bars     chan ProgressBar
}

func (b *workerBrowser) StartWorker(job []byte, progress func(done, total float64), done func([]byte)) (func(), bool) {
	b.job, b.progress, b.done = job, progress, done
	return func() {}, true
}

func (b *workerBrowser) SetProgress(bar ProgressBar) { b.bars <- bar }

// countingEnv is a vugu.EventEnv that reports each unlock: "render" or "only".
type countingEnv struct {
	mu      sync.RWMutex
	unlocks chan string
}

func (e *countingEnv) Lock()         { e.mu.Lock() }
func (e *countingEnv) UnlockOnly()   { e.mu.Unlock(); e.unlocks <- "only" }
func (e *countingEnv) UnlockRender() { e.mu.Unlock(); e.unlocks <- "render" }
func (e *countingEnv) RLock()        { e.mu.RLock() }
func (e *countingEnv) RUnlock()      { e.mu.RUnlock() }

// TestPlanProgressSetInPlace: a plan's progress in the worker moves its
// bar without a render of the page; its answer renders; progress arriving
// after the answer changes nothing.
func TestPlanProgressSetInPlace(t *testing.T) {
	b := &workerBrowser{bars: make(chan ProgressBar, 4)}
	env := &countingEnv{unlocks: make(chan string, 4)}
	a := NewApp(b, "")
	a.UseEventEnv(env)
	a.Start()
	if b.progress == nil || !a.Plan.Running {
		t.Fatalf("the plan did not go to the worker")
	}
	next := func(what string) string {
		t.Helper()
		select {
		case u := <-env.unlocks:
			return u
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no unlock", what)
			return ""
		}
	}
	b.progress(0.5, 1)
	if u := next("progress"); u != "only" {
		t.Errorf("progress unlocked with %s, want no render", u)
	}
	select { // set before the unlock
	case bar := <-b.bars:
		if bar != (ProgressBar{ID: "plan-progress", Value: 0.5, Max: 1, Text: "planning… 50 %"}) {
			t.Errorf("progress bar %+v", bar)
		}
	default:
		t.Errorf("progress set no bar")
	}
	b.done(RunJob(context.Background(), b.job, func(float64, float64) {}))
	if u := next("answer"); u != "render" {
		t.Errorf("the answer unlocked with %s, want a render", u)
	}
	if a.Plan.Running || a.Plan.Err != "" || a.Plan.Result.Plan == nil {
		t.Fatalf("after the answer: running %v, err %q", a.Plan.Running, a.Plan.Err)
	}
	b.progress(0.9, 1) // a late message
	if u := next("late progress"); u != "only" {
		t.Errorf("late progress unlocked with %s, want no render", u)
	}
	select { // it would have been set before the unlock
	case bar := <-b.bars:
		t.Errorf("late progress set %+v", bar)
	default:
	}
}
