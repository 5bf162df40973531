package cli

import (
	"fmt"
	"io"
	"net"

	"pipeplan/server"
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
	h, err := server.NewSiteHandler(*dir)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("serve: --addr %q: %w", *addr, err)
	}
	fmt.Fprintf(stdout, "pipeplan: serving %s on http://%s/\n", *dir, ln.Addr())
	srv := server.NewHTTPServer(h)
	return srv.Serve(ln)
}
