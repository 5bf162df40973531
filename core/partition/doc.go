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
//
// Everything is deterministic; long searches take a context.Context and a
// progress callback.
package partition
