# workerd configuration serving the built worker (./build.sh worker writes
# build/ beside this file) on 127.0.0.1:8787, Cloudflare's runtime without
# Cloudflare:
#
#   "$(scripts/workerd.sh install)" serve worker/workerd.capnp
#
# The end-to-end test (e2e_test.go) uses it with --socket-fd to serve on a
# port it chose. The modules are those wrangler deploys (wrangler.toml).
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [(name = "pipeplan", worker = .pipeplan)],
  sockets = [(name = "http", address = "127.0.0.1:8787", http = (), service = "pipeplan")],
);

const pipeplan :Workerd.Worker = (
  modules = [
    (name = "worker.mjs", esModule = embed "build/worker.mjs"),
    (name = "runtime.mjs", esModule = embed "build/runtime.mjs"),
    (name = "wasm_exec.js", esModule = embed "build/wasm_exec.js"),
    (name = "app.wasm", wasm = embed "build/app.wasm"),
  ],
  compatibilityDate = "2025-09-01",
);
