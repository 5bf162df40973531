package server

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// contentSecurityPolicy allows only what the playground needs: its own
// scripts, styles and fetches, and compiling WebAssembly ('wasm-unsafe-eval').
// No inline scripts or styles, no eval, no framing, no foreign origins.
const contentSecurityPolicy = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; " +
	"style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; worker-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// contentTypes maps the extensions the playground uses to their media types;
// other files are not served.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".wasm": "application/wasm",
	".json": "application/json",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".ico":  "image/x-icon",
	".txt":  "text/plain; charset=utf-8",
}

// precompressed lists the encodings build.sh may write next to a file, in
// order of preference, with their file suffix.
var precompressed = []struct{ encoding, suffix string }{
	{"br", ".br"},
	{"gzip", ".gz"},
}

// siteHandler serves the static playground from a directory and the /api
// endpoints: fixed content types, precompressed variants, content-hash ETags,
// security headers, no directory listings and no path traversal.
type siteHandler struct {
	dir string
	api http.Handler

	mu    sync.Mutex
	etags map[string]etagEntry // by file path
}

// etagEntry caches a file's content-hash ETag while its size and time are unchanged.
type etagEntry struct {
	size    int64
	modTime time.Time
	etag    string
}

// NewSiteHandler returns the playground handler for dir, or an error naming
// ./build.sh when the build outputs are missing.
func NewSiteHandler(dir string) (http.Handler, error) {
	if err := CheckBuildOutputs(dir); err != nil {
		return nil, err
	}
	return &siteHandler{dir: dir, api: NewAPIHandler(DefaultAPIOptions()), etags: map[string]etagEntry{}}, nil
}

// ServeHTTP serves /api/ requests through the API handler and everything
// else as a static file with the site's headers.
func (s *siteHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if strings.HasPrefix(r.URL.Path, "/api/") {
		s.api.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name, ok := staticName(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	ctype, ok := contentTypes[path.Ext(name)]
	if !ok {
		http.NotFound(w, r)
		return
	}
	file := filepath.Join(s.dir, filepath.FromSlash(name))
	fi, err := os.Stat(file)
	if err != nil || !fi.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	h.Add("Vary", "Accept-Encoding")
	encoding := ""
	for _, p := range precompressed {
		if !acceptsEncoding(r.Header.Get("Accept-Encoding"), p.encoding) {
			continue
		}
		// A variant older than its source is stale (an interrupted build): skip it.
		if vi, err := os.Stat(file + p.suffix); err == nil && vi.Mode().IsRegular() && !vi.ModTime().Before(fi.ModTime()) {
			file, fi, encoding = file+p.suffix, vi, p.encoding
			break
		}
	}
	f, err := os.Open(file)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	etag, err := s.etag(file, fi, f)
	if err != nil {
		http.Error(w, "read error", http.StatusInternalServerError)
		return
	}
	h.Set("Content-Type", ctype)
	if encoding != "" {
		h.Set("Content-Encoding", encoding)
	}
	// File names are not content-hashed, so browsers revalidate every time;
	// the ETag turns an unchanged file into a 304 without a body.
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", etag)
	http.ServeContent(w, r, name, fi.ModTime(), f)
}

// etag returns the strong content-hash ETag of the open file f, cached while
// the file's size and modification time stay the same.
func (s *siteHandler) etag(file string, fi os.FileInfo, f *os.File) (string, error) {
	s.mu.Lock()
	e, ok := s.etags[file]
	s.mu.Unlock()
	if ok && e.size == fi.Size() && e.modTime.Equal(fi.ModTime()) {
		return e.etag, nil
	}
	sum := sha256.New()
	if _, err := io.Copy(sum, f); err != nil {
		return "", err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	tag := `"` + base64.RawURLEncoding.EncodeToString(sum.Sum(nil)[:18]) + `"`
	s.mu.Lock()
	s.etags[file] = etagEntry{size: fi.Size(), modTime: fi.ModTime(), etag: tag}
	s.mu.Unlock()
	return tag, nil
}

// staticName maps a URL path to a relative file name under the site
// directory: "/" is index.html; anything with a hidden or parent segment,
// a backslash, a NUL or a trailing slash (a directory) is refused.
func staticName(urlPath string) (string, bool) {
	if urlPath == "/" || urlPath == "" {
		return "index.html", true
	}
	if !strings.HasPrefix(urlPath, "/") || strings.HasSuffix(urlPath, "/") ||
		strings.ContainsAny(urlPath, "\\\x00") {
		return "", false
	}
	name := urlPath[1:]
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || strings.HasPrefix(seg, ".") {
			return "", false
		}
	}
	if path.Clean(name) != name {
		return "", false
	}
	return name, true
}

// acceptsEncoding reports whether an Accept-Encoding header value allows enc:
// its own entry decides, else a "*" entry, and a weight of q=0 refuses
// (RFC 9110 §12.5.3). The first entry for a coding counts.
func acceptsEncoding(header, enc string) bool {
	star := -1.0 // the weight of "*"; -1 when not listed
	for _, part := range strings.Split(header, ",") {
		token, params, _ := strings.Cut(part, ";")
		token = strings.TrimSpace(token)
		switch {
		case strings.EqualFold(token, enc):
			return qValue(params) > 0
		case token == "*" && star < 0:
			star = qValue(params)
		}
	}
	return star > 0
}

// qValue is the weight among an Accept-Encoding entry's parameters
// ("q=0.5"; RFC 9110 §12.4.2): 1 when absent or malformed.
func qValue(params string) float64 {
	for _, p := range strings.Split(params, ";") {
		name, v, ok := strings.Cut(p, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		v = strings.TrimSpace(v)
		// qvalue = ("0" ["." 0*3DIGIT]) / ("1" ["." 0*3("0")])
		intPart, frac, _ := strings.Cut(v, ".")
		if (intPart != "0" && intPart != "1") || len(frac) > 3 || strings.Trim(frac, "0123456789") != "" {
			return 1
		}
		q, err := strconv.ParseFloat(intPart+"."+frac+"0", 64)
		if err != nil || q > 1 {
			return 1
		}
		return q
	}
	return 1
}
