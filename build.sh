#!/usr/bin/env bash
# build.sh — the only build entry of pipeplan.
#
#   ./build.sh          generate the UI code, build public/app.wasm, copy wasm_exec.js, precompress
#   ./build.sh serve    build, then serve the playground on http://127.0.0.1:8080
#   ./build.sh test     build, then check style (gofmt, go vet) and run the whole test suite
set -euo pipefail
cd "$(dirname "$0")"

build() {
	if compgen -G "ui/*.vugu" >/dev/null; then
		echo "build: vugugen ui/" >&2
		# -s merges the generated code into one file, renamed to the git-ignored *_vgen.go.
		rm -f ui/0_components_gen.go ui/0_components_vgen.go
		go tool vugugen -s -skip-main -skip-go-mod ui
		mv ui/0_components_gen.go ui/0_components_vgen.go
		gofmt -w ui/0_components_vgen.go
	fi
	if compgen -G "wasm/*.go" >/dev/null; then
		echo "build: public/app.wasm" >&2
		GOOS=js GOARCH=wasm go build -trimpath -ldflags="-s -w" -o public/app.wasm.tmp ./wasm
		mv public/app.wasm.tmp public/app.wasm
		cp "$(go env GOROOT)/lib/wasm/wasm_exec.js" public/wasm_exec.js
		# vugu's DOM renderer helper, loaded as a file so the CSP needs no 'unsafe-eval'.
		go run ./wasm/vuguhelper "$(go list -m -f "{{.Dir}}" github.com/vugu/vugu)/domrender" >public/vugu-render.js
		chmod u+w public/wasm_exec.js public/vugu-render.js
		for f in public/app.wasm public/wasm_exec.js public/vugu-render.js; do
			gzip -9 -k -f "$f"
			if command -v brotli >/dev/null; then brotli -f -q 11 "$f"; fi
		done
	fi
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
*)
	echo "usage: ./build.sh [serve|test]" >&2
	exit 2
	;;
esac
