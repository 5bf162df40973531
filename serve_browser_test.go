package main

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Browser tests drive the built playground (public/, made by ./build.sh) in
// real headless Chromium. They skip only when Chromium or the build is
// missing outside CI; in CI (env CI set) that is a failure.

// artifactsDir receives the screenshots; it is git-ignored.
const artifactsDir = "test-artifacts"

// browserSession is one Chromium process and the test server it browses.
type browserSession struct {
	ctx    context.Context // the browser's root context; tabs derive from it
	server *httptest.Server
}

// startBrowser serves public/ and starts headless Chromium with its own
// profile directory (not t.TempDir: Chrome still writes there while exiting).
func startBrowser(t *testing.T) *browserSession {
	t.Helper()
	exe := findChromium()
	if exe == "" || checkBuildOutputs("public") != nil {
		msg := "chromium not found"
		if exe != "" {
			msg = checkBuildOutputs("public").Error()
		}
		if os.Getenv("CI") != "" {
			t.Fatalf("browser tests need chromium and the build in CI: %s", msg)
		}
		t.Skipf("skipping browser tests: %s", msg)
	}
	h, err := newSiteHandler("public")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	profile, err := os.MkdirTemp("", "pipeplan-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1400, 1000),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		cancelCtx()
		cancelAlloc()
		srv.Close()
		os.RemoveAll(profile)
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc() // waits for the browser process to exit
		srv.Close()
		os.RemoveAll(profile)
	})
	return &browserSession{ctx: ctx, server: srv}
}

func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// tab is one browser tab of a session, with a per-tab deadline; it records
// uncaught page errors and Content-Security-Policy violations.
type tab struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

func (b *browserSession) newTab(t *testing.T) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel() })
	tb := &tab{ctx: ctx}
	// Collect CSP violations and uncaught errors from the first script on.
	const watch = `window.__pageErrors = [];
document.addEventListener("securitypolicyviolation", e => window.__pageErrors.push("CSP: " + e.violatedDirective + " " + e.blockedURI));
window.addEventListener("error", e => window.__pageErrors.push("error: " + e.message));
window.addEventListener("unhandledrejection", e => window.__pageErrors.push("rejection: " + e.reason));`
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: watch}); err != nil {
		t.Fatalf("new tab: %v", err)
	}
	return tb
}

// do runs actions in the tab and fails the test on error.
func (tb *tab) do(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(tb.ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression in the tab and decodes its value.
func eval[T any](t *testing.T, tb *tab, expr string) T {
	t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// checkPageErrors fails the test if the page reported errors or CSP violations.
func (tb *tab) checkPageErrors(t *testing.T) {
	t.Helper()
	errs := eval[[]string](t, tb, `window.__pageErrors || []`)
	if len(errs) > 0 {
		t.Errorf("page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// screenshot saves a full-page PNG under test-artifacts/.
func (tb *tab) screenshot(t *testing.T, name string) {
	t.Helper()
	png, err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(artifactsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(artifactsDir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}

// text returns the text content of the first element matching sel.
func (tb *tab) text(t *testing.T, sel string) string {
	t.Helper()
	s, err := chromedp.Run(tb.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("read %s: %v", sel, err)
	}
	return s
}

func TestBrowser(t *testing.T) {
	b := startBrowser(t)
	t.Run("LoadsAndRendersDefault", func(t *testing.T) {
		tb := b.newTab(t)
		tb.do(t, "load", chromedp.Navigate(b.server.URL+"/"),
			chromedp.WaitVisible(chromedp.CSS("#plan-timing")))
		firstRender := eval[float64](t, tb, `window.pipeplanTimings.firstRenderMs`)
		t.Logf("in-browser first render: %.0f ms after navigation start", firstRender)
		if got := tb.text(t, "#tab-plan"); got != "Plan" {
			t.Errorf("plan tab = %q, want Plan", got)
		}
		gpu := eval[string](t, tb, `document.getElementById("gpu").value`)
		if gpu != "nvidia-a100-sxm4-80gb" {
			t.Errorf("default GPU = %q, want nvidia-a100-sxm4-80gb", gpu)
		}
		tb.screenshot(t, "plan-default")
		tb.checkPageErrors(t)
	})
}
