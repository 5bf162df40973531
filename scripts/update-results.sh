#!/bin/sh
# Rewrites the generated tables of RESULTS.md (between <!-- results:NAME begin/end -->
# markers) from the code: published LLM runs, PipeDream, PipeDream-2BW, PTD-P, MadPipe,
# schedules.
set -e
cd "$(dirname "$0")/.."
go test ./scripts/results -run TestResultsUpToDate -count=1 -update
