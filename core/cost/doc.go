// Package cost holds pipeplan's analytic cost models: compute time from
// FLOPs and a size-dependent efficiency curve, communication time of the
// collectives and point-to-point transfers a parallel plan issues, memory per
// GPU per pipeline stage, and a full prediction of iteration time,
// throughput and memory for a transformer under tensor, pipeline and data
// parallelism (dissertation ch. 4). Like Calculon it keeps the application
// (model.Transformer), the execution (plan.Execution) and the system (hw.Cluster,
// EfficiencyCurve) apart so each can be swapped alone.
//
// Units: seconds, bytes, bytes/s and FLOP/s throughout.
package cost
