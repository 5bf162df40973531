package server

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// JSPage is a tab of the built playground in headless Chromium, for tests
// outside the package (TestOneAnswer) to call the page's JS API.
type JSPage struct{ tb *tab }

// OpenJSPage starts Chromium on the built playground (startBrowser skips
// without it outside CI) and waits for window.pipeplan.
func OpenJSPage(t *testing.T) *JSPage {
	b := startBrowser(t)
	tb := b.newTab(t)
	tb.do(t, "load the playground", chromedp.Navigate(b.server.URL+"/"))
	tb.waitFor(t, `typeof window.pipeplan === "object"`)
	return &JSPage{tb: tb}
}

// Eval evaluates a JavaScript expression whose value is a string.
func (p *JSPage) Eval(t *testing.T, expr string) string {
	t.Helper()
	return eval[string](t, p.tb, expr)
}
