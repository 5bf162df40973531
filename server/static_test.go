package server

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newTestSite writes a minimal built site into a temporary directory.
func newTestSite(t *testing.T) (string, http.Handler) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"index.html":     "<!doctype html><title>t</title>",
		"app.wasm":       "\x00asm\x01\x00\x00\x00 plain",
		"wasm_exec.js":   "// go",
		"vugu-render.js": "// vugu",
		"app.css":        "body{}",
		".secret.html":   "hidden",
		"sub/x.css":      "x{}",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(files["app.wasm"]))
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, "app.wasm.gz"), gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := NewSiteHandler(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, h
}

func get(h http.Handler, method, target string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestServeMissingBuildNamesBuildScript(t *testing.T) {
	_, err := NewSiteHandler(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "./build.sh") {
		t.Fatalf("err = %v, want a message naming ./build.sh", err)
	}
}

func TestServeContentTypesAndHeaders(t *testing.T) {
	_, h := newTestSite(t)
	for path, want := range map[string]string{
		"/":             "text/html; charset=utf-8",
		"/app.wasm":     "application/wasm",
		"/wasm_exec.js": "text/javascript; charset=utf-8",
		"/app.css":      "text/css; charset=utf-8",
	} {
		rec := get(h, "GET", path, nil)
		if rec.Code != 200 {
			t.Errorf("GET %s: status %d", path, rec.Code)
			continue
		}
		if got := rec.Header().Get("Content-Type"); got != want {
			t.Errorf("GET %s: Content-Type %q, want %q", path, got, want)
		}
		csp := rec.Header().Get("Content-Security-Policy")
		if !strings.Contains(csp, "'wasm-unsafe-eval'") || strings.Contains(csp, "'unsafe-eval'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("GET %s: CSP %q must allow wasm-unsafe-eval only", path, csp)
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: missing nosniff", path)
		}
	}
}

func TestServePrecompressed(t *testing.T) {
	_, h := newTestSite(t)
	rec := get(h, "GET", "/app.wasm", map[string]string{"Accept-Encoding": "br, gzip"})
	if rec.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding = %q, want gzip", rec.Header().Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(zr)
	if string(body) != "\x00asm\x01\x00\x00\x00 plain" {
		t.Errorf("decompressed body = %q", body)
	}
	if rec.Header().Get("Content-Type") != "application/wasm" {
		t.Errorf("compressed variant keeps the wasm type, got %q", rec.Header().Get("Content-Type"))
	}
	for _, ae := range []string{"", "identity", "gzip;q=0", "br"} {
		rec = get(h, "GET", "/app.wasm", map[string]string{"Accept-Encoding": ae})
		if rec.Header().Get("Content-Encoding") != "" || !strings.HasSuffix(rec.Body.String(), "plain") {
			t.Errorf("Accept-Encoding %q: got encoding %q, want the plain file", ae, rec.Header().Get("Content-Encoding"))
		}
	}
	if !strings.Contains(rec.Header().Get("Vary"), "Accept-Encoding") {
		t.Errorf("missing Vary: Accept-Encoding")
	}
}

func TestServeStaleVariantIgnored(t *testing.T) {
	dir, h := newTestSite(t)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "app.wasm.gz"), old, old); err != nil {
		t.Fatal(err)
	}
	rec := get(h, "GET", "/app.wasm", map[string]string{"Accept-Encoding": "gzip"})
	if rec.Header().Get("Content-Encoding") != "" {
		t.Errorf("a .gz older than its source must not be served")
	}
}

func TestServeETagRevalidation(t *testing.T) {
	dir, h := newTestSite(t)
	rec := get(h, "GET", "/app.css", nil)
	etag := rec.Header().Get("ETag")
	if !strings.HasPrefix(etag, `"`) || len(etag) < 10 {
		t.Fatalf("ETag = %q, want a strong content hash", etag)
	}
	rec = get(h, "GET", "/app.css", map[string]string{"If-None-Match": etag})
	if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Errorf("If-None-Match with the current ETag: status %d, body %d bytes; want 304, empty", rec.Code, rec.Body.Len())
	}
	later := time.Now().Add(time.Minute)
	if err := os.WriteFile(filepath.Join(dir, "app.css"), []byte("body{color:red}"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(dir, "app.css"), later, later)
	rec = get(h, "GET", "/app.css", map[string]string{"If-None-Match": etag})
	if rec.Code != 200 || rec.Header().Get("ETag") == etag {
		t.Errorf("changed file: status %d, ETag %q; want 200 and a new ETag", rec.Code, rec.Header().Get("ETag"))
	}
}

func TestServeRefusesTraversalListingsAndHiddenFiles(t *testing.T) {
	_, h := newTestSite(t)
	for _, path := range []string{
		"/sub/", "/sub", "/.secret.html", "/../go.mod", "/sub/../app.css", "/%2e%2e/go.mod",
		"/app.css/", "/a\\b.css", "//app.css", "/app.wasm.gz", "/nope.css",
	} {
		rec := get(h, "GET", "http://x"+path, nil)
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %q: status %d, want 404", path, rec.Code)
		}
	}
	if rec := get(h, "POST", "/app.css", nil); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /app.css: status %d, want 405", rec.Code)
	}
}

func TestAcceptsEncoding(t *testing.T) {
	for _, c := range []struct {
		header, enc string
		want        bool
	}{
		{"gzip, deflate, br", "br", true},
		{"gzip;q=0.5", "gzip", true},
		{"gzip;q=0", "gzip", false},
		{"GZIP", "gzip", true},
		{"*", "br", true},
		{"identity", "gzip", false},
		{"", "gzip", false},
		{"xgzip", "gzip", false},
		// A coding listed by name decides over "*", wherever it stands.
		{"*;q=0, gzip", "gzip", true},
		{"*, br;q=0", "br", false},
		{"br;Q=0.000", "br", false},
	} {
		if got := acceptsEncoding(c.header, c.enc); got != c.want {
			t.Errorf("acceptsEncoding(%q, %q) = %v, want %v", c.header, c.enc, got, c.want)
		}
	}
}

func TestServeAPILimits(t *testing.T) {
	_, h := newTestSite(t)
	big := bytes.Repeat([]byte(" "), 1<<20)
	req := httptest.NewRequest("POST", "/api/plan", bytes.NewReader(big))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("1 MiB body: status %d, want 413", rec.Code)
	}
	req = httptest.NewRequest("POST", "/api/plan", strings.NewReader(`{"bogus":1}`))
	req.Header.Set("Content-Type", "application/json")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "bogus") {
		t.Errorf("unknown field: status %d body %s; want 400 naming the field", rec.Code, rec.Body)
	}
	if rec := get(h, "GET", "/api/plan", nil); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET /api/plan: status %d, want 405", rec.Code)
	}
}

// BenchmarkServeWasmGzip serves a 4 MB precompressed wasm file with a
// cached ETag, as a browser's (re)load does.
func BenchmarkServeWasmGzip(b *testing.B) {
	dir := b.TempDir()
	for _, f := range requiredBuildOutputs {
		os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(bytes.Repeat([]byte("wasm"), 1<<20))
	zw.Close()
	os.WriteFile(filepath.Join(dir, "app.wasm.gz"), gz.Bytes(), 0o644)
	h, err := NewSiteHandler(dir)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		rec := get(h, "GET", "/app.wasm", map[string]string{"Accept-Encoding": "gzip"})
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

// FuzzStaticName checks the URL-path → file-name mapping never escapes the
// site directory or names a hidden file.
func FuzzStaticName(f *testing.F) {
	for _, s := range []string{"/", "/app.wasm", "/../x", "/a/./b", "//x", "/.git/config", "/a\\..\\b", "/sub/x.css"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		name, ok := staticName(p)
		if !ok {
			return
		}
		if name == "" || strings.HasPrefix(name, "/") || path.Clean(name) != name || !filepath.IsLocal(name) {
			t.Fatalf("staticName(%q) = %q escapes the site directory", p, name)
		}
		for _, seg := range strings.Split(name, "/") {
			if strings.HasPrefix(seg, ".") {
				t.Fatalf("staticName(%q) = %q names a hidden file", p, name)
			}
		}
	})
}
