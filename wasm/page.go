//go:build js && wasm

package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hack-pad/safejs"
	"github.com/vugu/vugu"

	"pipeplan/core/model"
	"pipeplan/ui"
)

// page is the browser side of the UI (ui.Browser): the URL fragment,
// clipboard, downloads and clock, through safejs.
type page struct {
	win, location, history, perf safejs.Value
}

func newPage() (*page, error) {
	p := &page{win: safejs.Global()}
	var err error
	for _, v := range []struct {
		name string
		dst  *safejs.Value
	}{{"location", &p.location}, {"history", &p.history}, {"performance", &p.perf}} {
		if *v.dst, err = p.win.Get(v.name); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// fragment is the current URL fragment without '#'.
func (p *page) fragment() string {
	h, err := p.location.Get("hash")
	if err != nil {
		return ""
	}
	s, _ := h.String()
	return strings.TrimPrefix(s, "#")
}

// SetFragment records a new state as a history entry, so back/forward walk
// through the inputs a user tried.
func (p *page) SetFragment(fragment string) {
	p.history.Call("pushState", nil, "", "#"+fragment)
}

// PageURL is the page address without its fragment.
func (p *page) PageURL() string {
	href, err := p.location.Get("href")
	if err != nil {
		return ""
	}
	s, _ := href.String()
	s, _, _ = strings.Cut(s, "#")
	return s
}

// CopyText starts an asynchronous clipboard write.
func (p *page) CopyText(text string) error {
	nav, err := p.win.Get("navigator")
	if err != nil {
		return err
	}
	clip, err := nav.Get("clipboard")
	if err != nil {
		return err
	}
	if clip.IsUndefined() {
		return errNoClipboard
	}
	_, err = clip.Call("writeText", text)
	return err
}

// errNoClipboard is CopyText's error where the page has no clipboard API
// (an insecure origin).
var errNoClipboard = errors.New("no clipboard in this context")

// Download offers data as a file through a temporary object URL.
func (p *page) Download(name, mime string, data []byte) error {
	arr, err := safejs.MustGetGlobal("Uint8Array").New(len(data))
	if err != nil {
		return err
	}
	if _, err := safejs.CopyBytesToJS(arr, data); err != nil {
		return err
	}
	opts, err := safejs.ValueOf(map[string]any{"type": mime})
	if err != nil {
		return err
	}
	parts, err := safejs.ValueOf([]any{safejs.Unsafe(arr)})
	if err != nil {
		return err
	}
	blob, err := safejs.MustGetGlobal("Blob").New(parts, opts)
	if err != nil {
		return err
	}
	urlAPI := safejs.MustGetGlobal("URL")
	href, err := urlAPI.Call("createObjectURL", blob)
	if err != nil {
		return err
	}
	doc := safejs.MustGetGlobal("document")
	a, err := doc.Call("createElement", "a")
	if err != nil {
		return err
	}
	a.Set("href", href)
	a.Set("download", name)
	body, _ := doc.Get("body")
	body.Call("appendChild", a)
	a.Call("click")
	body.Call("removeChild", a)
	urlAPI.Call("revokeObjectURL", href)
	return nil
}

// Focus focuses document.getElementById(id), if there is one.
func (p *page) Focus(id string) {
	doc, err := p.win.Get("document")
	if err != nil {
		return
	}
	el, err := doc.Call("getElementById", id)
	if err != nil || el.IsNull() {
		return
	}
	el.Call("focus")
}

// NowMillis is performance.now().
func (p *page) NowMillis() float64 {
	v, err := p.perf.Call("now")
	if err != nil {
		return 0
	}
	f, _ := v.Float()
	return f
}

// StartWorker runs a job in a Web Worker through window.pipeplanWorkers
// (boot.js), which keeps one worker warm and replaces a stopped one.
func (p *page) StartWorker(job []byte, progress func(done, total float64), done func(answer []byte)) (func(), bool) {
	pool, err := p.win.Get("pipeplanWorkers")
	if err != nil || pool.IsUndefined() {
		return nil, false
	}
	var onProgress, onDone safejs.Func
	release := func() { onProgress.Release(); onDone.Release() }
	onProgress, err = safejs.FuncOf(func(_ safejs.Value, args []safejs.Value) any {
		if len(args) == 2 {
			d, _ := args[0].Float()
			t, _ := args[1].Float()
			progress(d, t)
		}
		return nil
	})
	if err != nil {
		return nil, false
	}
	onDone, err = safejs.FuncOf(func(_ safejs.Value, args []safejs.Value) any {
		release()
		var answer string
		if len(args) == 1 {
			answer, _ = args[0].String()
		}
		done([]byte(answer))
		return nil
	})
	if err != nil {
		onProgress.Release()
		return nil, false
	}
	stopFn, err := pool.Call("run", string(job), onProgress.Value(), onDone.Value())
	if err != nil {
		release()
		return nil, false
	}
	return func() {
		stopFn.Invoke()
		release()
	}, true
}

// SetProgress sets a <progress> element's value, max and text in place.
func (p *page) SetProgress(bar ui.ProgressBar) {
	doc, err := p.win.Get("document")
	if err != nil {
		return
	}
	el, err := doc.Call("getElementById", bar.ID)
	if err != nil || el.IsNull() {
		return
	}
	el.Set("max", bar.Max)
	el.Set("value", bar.Value)
	el.Set("textContent", bar.Text)
}

// onHashChange restores the state when the fragment changes (back/forward,
// an edited address bar, a pasted link).
func (p *page) onHashChange(env vugu.EventEnv, app *ui.App) error {
	fn, err := safejs.FuncOf(func(safejs.Value, []safejs.Value) any {
		f := p.fragment()
		go func() {
			env.Lock()
			app.LoadFragment(f)
			env.UnlockRender()
		}()
		return nil
	})
	if err != nil {
		return err
	}
	_, err = p.win.Call("addEventListener", "hashchange", fn.Value())
	return err
}

// markFirstRender publishes window.pipeplanTimings.firstRenderMs, the page
// clock when the first UI render finished.
func (p *page) markFirstRender() {
	t, err := safejs.ValueOf(map[string]any{"firstRenderMs": p.NowMillis()})
	if err == nil {
		p.win.Set("pipeplanTimings", t)
	}
}

// ReadFile reads the first file chosen in the file input inputID through
// File.arrayBuffer and calls done with it from a new goroutine.
func (p *page) ReadFile(inputID string, done func(name string, data []byte, err error)) {
	fail := func(err error) { go done("", nil, err) }
	doc, err := p.win.Get("document")
	if err != nil {
		fail(err)
		return
	}
	input, err := doc.Call("getElementById", inputID)
	if err != nil || input.IsNull() {
		fail(fmt.Errorf("no file input %q", inputID))
		return
	}
	files, err := input.Get("files")
	if err != nil {
		fail(err)
		return
	}
	file, err := files.Index(0)
	if err != nil || file.IsUndefined() || file.IsNull() {
		fail(fmt.Errorf("no file chosen"))
		return
	}
	nameV, _ := file.Get("name")
	name, _ := nameV.String()
	sizeV, _ := file.Get("size")
	if size, _ := sizeV.Int(); size > maxUploadBytes {
		fail(fmt.Errorf("%s is %d bytes, over the %d-byte limit", name, size, maxUploadBytes))
		return
	}
	promise, err := file.Call("arrayBuffer")
	if err != nil {
		fail(err)
		return
	}
	var then safejs.Func
	then, err = safejs.FuncOf(func(_ safejs.Value, args []safejs.Value) any {
		then.Release()
		arr, err := safejs.MustGetGlobal("Uint8Array").New(args[0])
		if err != nil {
			fail(err)
			return nil
		}
		n, _ := arr.Length()
		data := make([]byte, n)
		if _, err := safejs.CopyBytesToGo(data, arr); err != nil {
			fail(err)
			return nil
		}
		go done(name, data, nil)
		return nil
	})
	if err != nil {
		fail(err)
		return
	}
	if _, err := promise.Call("then", then.Value()); err != nil {
		then.Release()
		fail(err)
	}
}

// maxUploadBytes bounds an uploaded profile (model.MaxProfileBytes).
const maxUploadBytes = model.MaxProfileBytes
