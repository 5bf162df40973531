//go:build js && wasm

// Command wasm is the playground's WebAssembly entry: in the page it mounts
// the vugu UI on #vugu_mount_point, keeps it in sync with the URL fragment
// and exposes a small JS API (window.pipeplan) through safejs; in a Web
// Worker (public/worker.js) the same program runs the page's long jobs.
package main

import (
	"fmt"
	"os"

	"github.com/hack-pad/safejs"
	"github.com/vugu/vugu"
	"github.com/vugu/vugu/domrender"

	"pipeplan/ui"
)

func main() {
	if doc, err := safejs.Global().Get("document"); err == nil && doc.IsUndefined() {
		if err := runWorker(); err != nil {
			fmt.Fprintln(os.Stderr, "pipeplan worker:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "pipeplan:", err)
		showFatal(err)
		os.Exit(1)
	}
}

func run() error {
	renderer, err := newRenderer("#vugu_mount_point")
	if err != nil {
		return err
	}
	defer renderer.Release()
	buildEnv, err := vugu.NewBuildEnv(renderer.EventEnv())
	if err != nil {
		return err
	}
	page, err := newPage()
	if err != nil {
		return err
	}
	app := ui.NewApp(page, page.fragment())
	app.UseEventEnv(renderer.EventEnv())
	root := &ui.Root{App: app}
	if err := page.onHashChange(renderer.EventEnv(), app); err != nil {
		return err
	}
	if err := exposeAPI(); err != nil {
		return err
	}
	first := true
	for ok := true; ok; ok = renderer.EventWait() {
		if err := renderer.Render(buildEnv.RunBuild(root)); err != nil {
			return err
		}
		if first {
			first = false
			page.markFirstRender()
			env := renderer.EventEnv()
			go func() { // plan after the inputs are on screen
				env.Lock()
				app.Start()
				env.UnlockRender()
			}()
		}
	}
	return nil
}

// newRenderer makes vugu's DOM renderer. Its constructor evaluates the
// renderer's helper script with window.eval, which the site's
// Content-Security-Policy forbids; index.html loads the same script as a file
// (vugu-render.js), so eval is swapped for a no-op for that one call.
func newRenderer(mount string) (*domrender.JSRenderer, error) {
	win := safejs.Global()
	loaded, err := win.Get("vuguRender")
	if err != nil || loaded.IsUndefined() {
		return nil, fmt.Errorf("vugu-render.js is not loaded (index.html must include it before wasm_exec.js)")
	}
	orig, err := win.Get("eval")
	if err != nil {
		return nil, err
	}
	noop, err := safejs.FuncOf(func(safejs.Value, []safejs.Value) any { return nil })
	if err != nil {
		return nil, err
	}
	defer noop.Release()
	if err := win.Set("eval", noop.Value()); err != nil {
		return nil, err
	}
	defer win.Set("eval", orig)
	return domrender.New(mount)
}

// showFatal replaces the mount point's content with a startup error.
func showFatal(err error) {
	doc, e := safejs.Global().Get("document")
	if e != nil {
		return
	}
	el, e := doc.Call("getElementById", "vugu_mount_point")
	if e != nil || el.IsNull() {
		return
	}
	el.Set("textContent", "pipeplan failed to start: "+err.Error())
}
