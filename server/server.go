// Package server is pipeplan's web server: the playground's static files
// (public/, written by ./build.sh) and the HTTP API over the application
// layer (pipeplan/app).
package server

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// requiredBuildOutputs are the files ./build.sh writes that the page needs.
var requiredBuildOutputs = []string{"index.html", "app.wasm", "wasm_exec.js", "vugu-render.js"}

// NewHTTPServer wraps h with the timeouts and header limits of a public server.
func NewHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
	}
}

// CheckBuildOutputs reports the first missing build output of dir, naming
// the command that creates it.
func CheckBuildOutputs(dir string) error {
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
