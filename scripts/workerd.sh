#!/usr/bin/env bash
# scripts/workerd.sh — the workerd binary (Cloudflare's Workers runtime) for
# the worker's local end-to-end test (worker/e2e_test.go), without Cloudflare.
#
#   scripts/workerd.sh install   install it once into the cache (npm), print its path
#   scripts/workerd.sh path      print its path, or fail when it is not installed
#
# The version is the workerd that wrangler 4.164.0 pins; only its
# platform package (@cloudflare/workerd-linux-64 or -arm64, ~100 MB) is
# installed, not wrangler itself. The cache is $PIPEPLAN_CACHE, else
# $XDG_CACHE_HOME/pipeplan, else ~/.cache/pipeplan.
set -euo pipefail

version=1.20261117.1 # workerd pinned by wrangler@4.164.0
case "$(uname -s)/$(uname -m)" in
Linux/x86_64) pkg=@cloudflare/workerd-linux-64 ;;
Linux/aarch64 | Linux/arm64) pkg=@cloudflare/workerd-linux-arm64 ;;
Darwin/arm64) pkg=@cloudflare/workerd-darwin-arm64 ;;
Darwin/x86_64) pkg=@cloudflare/workerd-darwin-64 ;;
*)
	echo "workerd.sh: no workerd package for $(uname -s)/$(uname -m)" >&2
	exit 1
	;;
esac
dir="${PIPEPLAN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pipeplan}/workerd-$version"
bin="$dir/node_modules/$pkg/bin/workerd"

case "${1:-}" in
path)
	if [ ! -x "$bin" ]; then
		echo "workerd.sh: workerd $version is not installed in $dir: run scripts/workerd.sh install (needs npm)" >&2
		exit 1
	fi
	;;
install)
	if [ ! -x "$bin" ]; then
		command -v npm >/dev/null || {
			echo "workerd.sh: npm is needed to install workerd" >&2
			exit 1
		}
		echo "workerd.sh: npm install $pkg@$version into $dir" >&2
		# Installed beside and renamed, so a half-finished install is never used.
		rm -rf "$dir.tmp"
		mkdir -p "$dir.tmp"
		npm install --prefix "$dir.tmp" --no-save --no-audit --no-fund --loglevel=error "$pkg@$version" >&2
		"$dir.tmp/node_modules/$pkg/bin/workerd" --version >&2
		rm -rf "$dir"
		mv "$dir.tmp" "$dir"
	fi
	;;
*)
	echo "usage: scripts/workerd.sh install|path" >&2
	exit 2
	;;
esac
echo "$bin"
