#!/usr/bin/env bash
# build.sh — the only build entry of pipeplan.
#
#   ./build.sh          generate the UI code, build public/app.wasm, copy wasm_exec.js, precompress
#   ./build.sh serve    build, then serve the playground on http://127.0.0.1:8080
#   ./build.sh test     build, then check style (gofmt, go vet), run the whole test suite, then
#                       fuzz every FuzzXxx target briefly (a crasher fails the step; CI runs it)
#   ./build.sh worker [DIR]  build the Cloudflare Worker (/api/v1) into DIR (default worker/build)
#
# Environment:
#   PIPEPLAN_FUZZTIME   fuzzing time per target for "test" (go test -fuzztime; default 5s);
#                       0 skips fuzzing, e.g. PIPEPLAN_FUZZTIME=0 ./build.sh test locally
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

# fuzz_all runs every FuzzXxx target of every package (found with go test
# -list, so a new target is picked up) for PIPEPLAN_FUZZTIME each, after the
# seed corpora have run as ordinary tests. A crasher is written under the
# package's testdata/fuzz/FuzzXxx/ (commit it as a seed with the fix).
fuzz_all() {
	local fuzztime="${PIPEPLAN_FUZZTIME:-5s}"
	if [ "$fuzztime" = 0 ] || [ "$fuzztime" = 0s ]; then
		echo "fuzz: skipped (PIPEPLAN_FUZZTIME=$fuzztime)" >&2
		return 0
	fi
	local targets failed=() pkg target corpus before log
	log=$(mktemp)
	# "go test -list" prints each package's matching names, then its "ok" line.
	targets=$(go test -list '^Fuzz' ./... | awk '/^Fuzz/ { names[n++] = $1; next }
		/^ok/ { for (i = 0; i < n; i++) print $2, names[i]; n = 0 }')
	echo "fuzz: $(echo "$targets" | grep -c .) targets, $fuzztime each" >&2
	while read -r pkg target; do
		[ -n "$target" ] || continue
		echo "fuzz: $pkg $target" >&2
		corpus="$(go list -f '{{.Dir}}' "$pkg")/testdata/fuzz/$target"
		before=$(ls "$corpus" 2>/dev/null || true)
		if go test -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" -fuzzminimizetime 10s "$pkg" 2>&1 | tee "$log"; then
			continue
		fi
		# Go 1.26's fuzz coordinator can fail a target with a bare "context
		# deadline exceeded" as -fuzztime ends (golang/go#75804, fixed in 1.27):
		# no crasher written, nothing to reproduce. Anything else fails.
		if [ "$(ls "$corpus" 2>/dev/null || true)" = "$before" ] && grep -qx '    context deadline exceeded' "$log"; then
			echo "fuzz: $pkg $target: end-of-fuzztime race of the Go fuzz coordinator (golang/go#75804), no crasher: ignored" >&2
			continue
		fi
		failed+=("$pkg $target")
	done <<<"$targets"
	rm -f "$log"
	if [ ${#failed[@]} -gt 0 ]; then
		echo "fuzz: crashers (see testdata/fuzz/ in the package) in:" >&2
		printf '  %s\n' "${failed[@]}" >&2
		return 1
	fi
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
	# The worker's end-to-end test runs Cloudflare's workerd: install it
	# (npm, once, into the cache) where npm is; without it that test skips,
	# or fails under CI=true.
	if command -v npm >/dev/null; then
		scripts/workerd.sh install >/dev/null
	fi
	# The runner's end-to-end tests start real torch jobs: under load the
	# package takes over go test's default 10 minutes (47 minutes was seen
	# at load 30–40), so the limit only catches hangs.
	go test -count=1 -timeout 75m ./...
	fuzz_all
	;;
worker)
	build_worker "${2:-}"
	;;
*)
	echo "usage: ./build.sh [serve|test|worker [DIR]]" >&2
	exit 2
	;;
esac
