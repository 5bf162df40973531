// Package cost holds pipeplan's analytic cost models: compute time from
// FLOPs and a size-dependent efficiency curve, communication time of the
// collectives and point-to-point transfers a parallel plan issues, memory per
// GPU per pipeline stage, and a full prediction of iteration time,
// throughput and memory for a transformer under tensor, pipeline, data,
// context and expert parallelism (dissertation ch. 4; Korthikanti et al.
// 2022; Megatron-Core). Like Calculon it keeps the application
// (model.Transformer), the execution (plan.Execution) and the system
// (hw.Cluster, EfficiencyCurve) apart so each can be swapped alone.
//
// Layers are costed through their GEMMs (model.Transformer.ForwardGEMMs:
// GQA, gated MLPs, routed and shared experts, MLA), each split over t·cp
// ranks at its own efficiency; flash attention skips the causal mask's
// upper blocks and stores no s×s scores; ring attention's K/V exchange is
// exposed only where it exceeds the attention compute; expert all-to-alls
// are not overlapped, and hierarchical where the ep group spans servers
// (the copies for the own server over its fabric while the others cross
// the network); an MoE layer also pays its router (a bf16 h×E GEMM and its
// softmax/top-k) and the token permutation and unpermutation, memory-bound
// at the achievable HBM bandwidth; with Overlap.GradReduce / ParamGather the gradient
// reduce-scatter (all-gather) is exposed only where the last microbatch's
// backward (first forward) cannot hide it, and at least one 40M-parameter
// bucket. TFLOP/s is reported twice: TFLOPSPerGPU counts executed FLOPs
// (recomputation included, eq. 4.2), ModelTFLOPSPerGPU counts model FLOPs
// (Megatron-LM's num_floating_point_operations), the figure published
// tables use; MFU is model FLOPs over peak.
//
// FP8 (model.FP8) is costed as Transformer Engine runs it: the linear
// layers' GEMMs at the FP8 rate, the attention core and the output layer
// in bf16, weights, activations and communication in bf16 except the
// stored GEMM inputs (model.Transformer.LayerActivationBytesAt). TE's
// cached FP8 weight copies are not yet counted in memory. Expert
// parallelism folds over the tensor-parallel ranks (etp = 1) when ep does
// not divide cp·d (Megatron-Core's MoE parallel folding).
//
// Fit and held-out data. The two constants of the default efficiency curve
// (DefaultKernelLatencySeconds, DefaultSustainedMatmulFraction) were fitted
// on dissertation Table 4.1 (A100); Table 4.2 is held out
// (calibration_test.go). DefaultFP8SustainedMatmulFraction (0.57) was fitted
// on the two runs of testdata/published_runs.json marked "fit" (NeMo 24.07,
// Llama 3 8B and 70B FP8 on H100) by minimizing the larger of their two
// errors over a 0.02 grid (0.56: +7.8 %/−10.4 %; 0.58: +10.5 %/−8.1 %);
// they end at +9.1 % and −9.2 %. The other 12 runs are held out, nothing was
// fitted to them (model TFLOP/s per GPU, predicted vs published; in
// brackets before the MoE router/permutation, the hierarchical all-to-all
// and the end-shortened uneven splits):
//
//	Llama 3 405B BF16, 8K, 8,192 H100 (Llama 3 paper)      −9.9 % (−10.3 %)
//	Llama 3 405B BF16, 8K, 16,384 H100                      −9.7 % (−10.1 %)
//	Llama 3 405B BF16, 128K, cp 16 (reported only)         +28.9 % (+28.7 %)
//	Llama 3 8B FP8, 8 H100, FSDP (Megatron-Bridge 25.11)     −8.6 %
//	Llama 3 70B FP8, 64 H100, tp4 pp8 vp5 (25.11 / 26.02)   −12.1 % / −12.2 %
//	Llama 3.1 405B FP8, 1,024 H100, cp 2 (25.11 / 26.02)     −7.6 % / −9.6 % (−8.0 / −9.9)
//	Qwen3 235B-A22B FP8, 256 H100, ep 32 (25.11 / 26.02)     −5.2 % / −7.6 % (−18.2 / −20.4)
//	Qwen3 30B-A3B FP8, 16 H100, ep 8 (reported only)       +212 % / +231 % (+233 / +256)
//
// published_test.go bounds dense runs at 13 % and MoE runs at 20 % and says
// why two runs are only reported; RESULTS.md has the table with the
// chosen configurations.
//
// Pipeline stages split the layers by ChunkLayers: the chunks one layer
// short sit at both ends (the first and last stages also hold the
// embedding and output layer, and the first stashes the most
// microbatches), as Megatron-LM's first/last-stage layer counts and the
// Llama 3 paper do.
//
// Units: seconds, bytes, bytes/s and FLOP/s throughout.
package cost
