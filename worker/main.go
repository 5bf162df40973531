// Command worker serves pipeplan's HTTP API (/api/v1) as a Cloudflare
// Worker: the same handler as `pipeplan serve` (server.NewAPIHandler) over
// the same application layer, compiled with GOOS=js GOARCH=wasm and run by
// the JavaScript shim of github.com/syumai/workers.
//
// Build and deploy it with ./build.sh worker and wrangler deploy (README).
// Outside wasm, workers.Serve falls back to a plain HTTP server on $PORT
// (default 9900), which is handy for a quick look: go run ./worker.
package main

import (
	"github.com/syumai/workers"

	"pipeplan/server"
)

func main() {
	workers.Serve(server.NewAPIHandler(server.DefaultAPIOptions()))
}
