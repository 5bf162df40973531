// Package partition holds pipeplan's partitioners, which split a model over
// the GPUs of a cluster:
//
//   - PipeDream: the hierarchical dynamic program with stage replication of
//     the dissertation §2.4.1, with two cost models — pipeplan's (the
//     paper's structure with compute/all-reduce overlap, ring all-reduce
//     volume and per-boundary activation traffic) and one that reproduces
//     PipeDream's original optimizer exactly.
//   - TwoBW: the PipeDream-2BW planner (§3.3, Algorithm 1).
//   - MadPipe: memory-aware partitioning with a special processor and the
//     1F1B* periodic schedule (madpipe-2020).
//   - PTD-P: the search over tensor × pipeline × data parallelism of §4.3.
//
// Each is a Planner, registered by its plan name (Lookup, Planners): it
// takes a Problem — the model, the System (what it needs of the cluster,
// derived from the topology in one place) and the fixed execution choices
// — and returns ranked Candidates, each a plan.Execution with stages and
// predictions that RunPlan exports. Everything is deterministic; planners
// take a context.Context and report Progress as done of total units.
package partition
