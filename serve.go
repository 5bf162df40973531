package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// The playground is served from disk, from the public/ directory that
// ./build.sh fills (app.wasm, wasm_exec.js, precompressed variants). Serving
// from disk rather than go:embed keeps `go run .` working without a build
// step baked into the Go build, and lets a rebuilt app.wasm be picked up
// without restarting the server. --dir points elsewhere for an installed binary.

func init() {
	register("serve", command{
		summary: "serve the browser playground (default http://127.0.0.1:8080)",
		run:     runServe,
	})
}

// requiredBuildOutputs are the files ./build.sh writes that the page needs.
var requiredBuildOutputs = []string{"index.html", "app.wasm", "wasm_exec.js", "vugu-render.js"}

func runServe(args []string, stdout io.Writer) error {
	fs := newFlagSet("serve")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address `HOST:PORT`")
	dir := fs.String("dir", "public", "directory of the built playground (written by ./build.sh)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	h, err := newSiteHandler(*dir)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("serve: --addr %q: %w", *addr, err)
	}
	fmt.Fprintf(stdout, "pipeplan: serving %s on http://%s/\n", *dir, ln.Addr())
	srv := newHTTPServer(h)
	return srv.Serve(ln)
}

// newHTTPServer wraps h with the timeouts and header limits of a public server.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
	}
}

// checkBuildOutputs reports the first missing build output of dir, naming
// the command that creates it.
func checkBuildOutputs(dir string) error {
	for _, name := range requiredBuildOutputs {
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("serve: %s is missing: run ./build.sh first (it builds the WebAssembly playground into %s/)", p, dir)
		}
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("serve: %s is not a regular file", p)
		}
	}
	return nil
}
