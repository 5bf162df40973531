// Package results regenerates the tables of RESULTS.md: the cost model
// against every stored published LLM training run (core/cost's
// ComparePublished, what TestPublishedRuns asserts) and against
// Korthikanti et al. 2022's Table 5 (cost.PredictKorthikanti, what
// TestKorthikantiTable5 asserts), and the planning
// results of the papers pipeplan implements: PipeDream (dissertation ch.
// 2), PipeDream-2BW (ch. 3, ICML'21), PTD-P (ch. 4, SC'21), MadPipe (2020)
// and the schedule kinds' bubbles.
//
// Every table is computed by running pipeplan's CLI (cli.Run, the same code
// as `go run . partition ...` and `go run . transformer ...`) with --json,
// or, where the CLI has no command for a baseline, core/partition and
// core/schedule directly; the commands are printed with the tables. The
// paper numbers each table compares against are in testdata/, each with its
// source (paper, table or figure, page).
//
// RESULTS.md holds each table between the markers
//
//	<!-- results:NAME begin -->
//	<!-- results:NAME end -->
//
// `go test ./scripts/results -run TestResultsUpToDate -update` (or
// scripts/update-results.sh) rewrites them; without -update the test fails
// when RESULTS.md differs from what the code computes, so the document
// cannot drift from the code.
package results
