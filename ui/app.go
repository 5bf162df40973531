// Package ui holds the playground's vugu components (the .vugu files) and
// their logic (the .go files). It never touches JavaScript directly: the
// wasm entry hands it a Browser for the few things only the page can do.
package ui

import (
	"fmt"

	"github.com/vugu/vugu"

	"pipeplan/core/model"

	"pipeplan/app"
	"pipeplan/app/request"
)

// Browser is what the UI needs from the page it runs in.
type Browser interface {
	// SetFragment replaces the URL fragment (without '#') without reloading.
	SetFragment(fragment string)
	// PageURL is the page address without its fragment.
	PageURL() string
	// CopyText puts text on the clipboard.
	CopyText(text string) error
	// Download offers data to the user as a file.
	Download(name, mime string, data []byte) error
	// NowMillis is the page clock (performance.now), in milliseconds.
	NowMillis() float64
	// ReadFile reads the file chosen in the file input with the given id
	// and calls done with its name and bytes (asynchronously, from the page).
	ReadFile(inputID string, done func(name string, data []byte, err error))
	// Focus moves the keyboard focus to the element with the given id.
	Focus(id string)
	// StartWorker runs job (a Job as JSON) in a Web Worker running this
	// same program, calling progress with (done, total) as it moves and
	// done with the JobAnswer as JSON. Both are called from the page's
	// event loop and must not block. stop ends the worker at once (done
	// is then never called); ok is false when no worker could be started.
	StartWorker(job []byte, progress func(done, total float64), done func(answer []byte)) (stop func(), ok bool)
	// SetProgress sets a <progress> element's value, max and text in
	// place, without a render; it does nothing when the element is absent.
	SetProgress(bar ProgressBar)
}

// ProgressBar is the state of the <progress> element with id ID.
type ProgressBar struct {
	ID         string
	Value, Max float64
	Text       string
}

// App is the playground's model shared by all components: the UI state
// (mirrored in the URL fragment), the visible error and the latest results.
type App struct {
	// State is every input of every page.
	State request.State
	// Err is the error banner's text; "" hides it.
	Err string
	// CopyStatus reports the last Copy link action.
	CopyStatus string
	// ShareLink is the last link Copy link made ("" before).
	ShareLink string
	// ExportCommand is the runner command shown after Export plan ("" before).
	ExportCommand string
	// LaunchFormat is the engine whose launch artifact the Plan page shows
	// (core/launch's format name; "" is the first).
	LaunchFormat string
	// LaunchStatus reports the last Copy of a launch artifact.
	LaunchStatus string
	// Plan holds the Plan page's latest result.
	Plan PlanView
	// Cluster holds the Cluster page's latest result.
	Cluster ClusterView
	// Sim is the Cluster page's trace simulation.
	Sim SimView
	// CostView holds the Cost page's latest result.
	CostView CostView
	// UploadMicrobatch is the minibatch size assumed for an uploaded graph.txt.
	UploadMicrobatch int

	browser  Browser
	fragment string // the fragment last written or read
	started  bool   // results are computed only after Start
	env      vugu.EventEnv
	uploaded *model.Profile // the uploaded layer profile, if any
	pinned   *pinned        // the candidate kept for comparison, if any
	focusRow string         // the candidate row to focus after the next renders
	planRun  int            // counts re-plans; a worker's answer to an older one is dropped
	simRun   int            // counts simulations, likewise
	charts   charts         // the Plan page's charts of the result on screen
}

// NewApp makes the UI from a URL fragment; a bad fragment shows its error
// and falls back to the defaults. It computes nothing until Start, so the
// page's first render shows the inputs at once.
func NewApp(b Browser, fragment string) *App {
	a := &App{browser: b, UploadMicrobatch: 32}
	a.LoadFragment(fragment)
	return a
}

// LoadFragment restores the state from a URL fragment (on start, and when
// the fragment changes by back/forward or an edited address).
func (a *App) LoadFragment(fragment string) {
	if fragment == a.fragment && a.fragment != "" {
		return
	}
	s, err := request.Decode(fragment)
	a.Err = ""
	if err != nil {
		a.Err = err.Error() + " — showing the defaults instead."
	} else if !app.KnownModel(s.Plan.Model) {
		// A link from another build may name a preset this one lacks:
		// the rest of the link still holds, on the default model.
		def := request.Default().Plan.Model
		name := def
		for _, m := range app.Models() {
			if m.ID == def {
				name = m.Name
			}
		}
		a.Err = fmt.Sprintf("shared link: plan.model: unknown preset %q — showing the default model, %s, instead.", s.Plan.Model, name)
		s.Plan.Model = def
	}
	a.State = s
	a.fragment = fragment
	a.recompute()
}

// SetTab opens one of the pages; an unknown one is shown as an error and
// changes nothing.
func (a *App) SetTab(id string) {
	next := a.State
	next.Tab = id
	if err := next.Validate(); err != nil {
		a.Err = err.Error()
		return
	}
	a.State = next
	a.changed()
}

// changed records an input change: it rewrites the URL fragment and
// recomputes the results.
func (a *App) changed() {
	a.Err = ""
	a.CopyStatus = ""
	a.ShareLink = ""
	a.ExportCommand = ""
	a.LaunchStatus = ""
	if f, err := request.Encode(a.State); err != nil {
		a.Err = err.Error()
	} else if f != a.fragment {
		a.fragment = f
		a.browser.SetFragment(f)
	}
	a.recompute()
}

// Start computes the first results (call it after the first render).
func (a *App) Start() {
	a.started = true
	a.recompute()
}

// recompute refreshes the results of the open page.
func (a *App) recompute() {
	if !a.started {
		return
	}
	switch a.State.Tab {
	case "plan":
		a.replan()
	case "cluster":
		a.reallocate()
	case "cost":
		a.recost()
	}
}

// ShareURL is the link that restores the current view.
func (a *App) ShareURL() string {
	return a.browser.PageURL() + "#" + a.fragment
}

// CopyLink copies the share link to the clipboard.
func (a *App) CopyLink() {
	if a.fragment == "" {
		f, err := request.Encode(a.State)
		if err != nil {
			a.Err = err.Error()
			return
		}
		a.fragment = f
		a.browser.SetFragment(f)
	}
	a.ShareLink = a.ShareURL()
	if err := a.browser.CopyText(a.ShareLink); err != nil {
		a.CopyStatus = fmt.Sprintf("could not copy (%v): the link is in the address bar", err)
		return
	}
	a.CopyStatus = "link copied"
}

func stateTabs() []string { return request.Tabs }
