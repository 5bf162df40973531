#!/bin/sh
# Regenerates RESULTS.md's Gavel Figure 5.9 sweep (scripts/gavelsweep): 24
# simulations of 6,000-job traces, about 30 CPU-minutes (2 at a time on a
# 2-core machine: ~45 minutes). Extra arguments go to gavelsweep, e.g. -j 16.
set -e
cd "$(dirname "$0")/.."
go run ./scripts/gavelsweep -write RESULTS.md "$@"
