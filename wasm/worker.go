//go:build js && wasm

package main

import (
	"context"
	"time"

	"github.com/hack-pad/safejs"

	"pipeplan/ui"
)

// progressEvery bounds how often a worker posts progress to the page. Each
// message costs the page's UI thread (a simulation's re-renders the whole
// page, 50–300 ms under load), and the answer waits behind that work: so a
// job posts none in its first progressEvery either, and one that ends
// sooner sends the page nothing but its answer.
const progressEvery = 250 * time.Millisecond

// runWorker is the program's life in a Web Worker (public/worker.js): it
// defines self.pipeplanRunJob(job), which runs one ui.Job and posts
// {type: "progress", done, total} messages and then {type: "answer",
// answer}, and tells worker.js it is ready. The page stops a job by
// terminating the worker, so a job needs no cancellation of its own.
func runWorker() error {
	self := safejs.Global()
	post := func(msg map[string]any) {
		v, err := safejs.ValueOf(msg)
		if err == nil {
			self.Call("postMessage", v)
		}
	}
	run, err := safejs.FuncOf(func(_ safejs.Value, args []safejs.Value) any {
		if len(args) != 1 {
			return nil
		}
		job, _ := args[0].String()
		go func() {
			last := time.Now()
			answer := ui.RunJob(context.Background(), []byte(job), func(done, total float64) {
				if now := time.Now(); now.Sub(last) >= progressEvery {
					last = now
					post(map[string]any{"type": "progress", "done": done, "total": total})
				}
			})
			post(map[string]any{"type": "answer", "answer": string(answer)})
		}()
		return nil
	})
	if err != nil {
		return err
	}
	if err := self.Set("pipeplanRunJob", run.Value()); err != nil {
		return err
	}
	if _, err := self.Call("pipeplanWorkerReady"); err != nil {
		return err
	}
	select {} // serve jobs until the page terminates the worker
}
