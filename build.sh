#!/usr/bin/env bash
# build.sh — the only build entry of pipeplan.
#
#   ./build.sh          generate the UI code, build public/app.wasm, copy wasm_exec.js, precompress
#   ./build.sh serve    build, then serve the playground on http://127.0.0.1:8080
#   ./build.sh test     build, then check style (gofmt, go vet) and run the whole test suite
#   ./build.sh worker [DIR]  build the Cloudflare Worker (/api/v1) into DIR (default worker/build)
set -euo pipefail
cd "$(dirname "$0")"

build() {
	# Regenerate the UI code only when a .vugu file changed (make-style), so
	# builds running side by side do not rewrite it under each other.
	if compgen -G "ui/*.vugu" >/dev/null && { [ ! -f ui/0_components_vgen.go ] ||
		[ -n "$(find ui -maxdepth 1 -name '*.vugu' -newer ui/0_components_vgen.go)" ]; }; then
		echo "build: vugugen ui/" >&2
		# -s merges the generated code into one file, renamed to the git-ignored *_vgen.go.
		rm -f ui/0_components_gen.go
		go tool vugugen -s -skip-main -skip-go-mod ui
		gofmt -w ui/0_components_gen.go
		mv ui/0_components_gen.go ui/0_components_vgen.go
	fi
	if compgen -G "wasm/*.go" >/dev/null; then
		echo "build: public/app.wasm" >&2
		# Every output is written to a temporary file and renamed, so a
		# server (or a second build) never sees a half-written file.
		local tmp=".$$.tmp"
		GOOS=js GOARCH=wasm go build -trimpath -ldflags="-s -w" -o "public/app.wasm$tmp" ./wasm
		mv "public/app.wasm$tmp" public/app.wasm
		cp "$(go env GOROOT)/lib/wasm/wasm_exec.js" "public/wasm_exec.js$tmp"
		# vugu's DOM renderer helper, loaded as a file so the CSP needs no 'unsafe-eval'.
		go run ./wasm/vuguhelper "$(go list -m -f "{{.Dir}}" github.com/vugu/vugu)/domrender" >"public/vugu-render.js$tmp"
		chmod 644 "public/wasm_exec.js$tmp" "public/vugu-render.js$tmp"
		mv "public/wasm_exec.js$tmp" public/wasm_exec.js
		mv "public/vugu-render.js$tmp" public/vugu-render.js
		for f in public/app.wasm public/wasm_exec.js public/vugu-render.js; do
			gzip -9 -c "$f" >"$f.gz$tmp" && mv "$f.gz$tmp" "$f.gz"
			if command -v brotli >/dev/null; then brotli -q 11 -c "$f" >"$f.br$tmp" && mv "$f.br$tmp" "$f.br"; fi
		done
	fi
}

# workerMaxGzipBytes is Workers' free-plan limit on a worker's compressed size.
workerMaxGzipBytes=3000000

# build_worker writes the Worker into $1: app.wasm (./worker for js/wasm)
# and the JavaScript shim of syumai/workers (worker.mjs, runtime.mjs,
# wasm_exec.js). It refuses a worker over the free plan's size.
build_worker() {
	local out="${1:-worker/build}"
	local tmp
	tmp="$(dirname "$out")/.$(basename "$out").$$.tmp"
	echo "build: $out/ (Cloudflare Worker)" >&2
	go tool workers-assets-gen -mode=go -o "$tmp"
	GOOS=js GOARCH=wasm go build -trimpath -ldflags="-s -w" -o "$tmp/app.wasm" ./worker
	local size gz
	size=$(wc -c <"$tmp/app.wasm")
	gz=$(cat "$tmp"/* | gzip -9 | wc -c)
	echo "build: worker app.wasm $size bytes, $gz bytes gzipped with its shim (limit $workerMaxGzipBytes)" >&2
	if [ "$gz" -gt "$workerMaxGzipBytes" ]; then
		rm -rf "$tmp"
		echo "build: the worker is over Workers' free-plan limit of $workerMaxGzipBytes bytes compressed" >&2
		return 1
	fi
	rm -rf "$out"
	mv "$tmp" "$out"
}

check_style() {
	local unformatted
	unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*'))
	if [ -n "$unformatted" ]; then
		echo "gofmt needed on:" >&2
		echo "$unformatted" >&2
		return 1
	fi
	go vet ./...
}

case "${1:-}" in
"")
	build
	;;
serve)
	shift
	build
	go run . serve "$@"
	;;
test)
	build
	check_style
	go test -count=1 ./...
	;;
worker)
	build_worker "${2:-}"
	;;
*)
	echo "usage: ./build.sh [serve|test|worker [DIR]]" >&2
	exit 2
	;;
esac
