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
// bucket. ZeRO-2 and -3 shard the gradients, so every microbatch's
// backward reduce-scatters them (DeepSpeed, PyTorch FSDP): m
// reduce-scatters a step, the earlier ones hidden behind a whole slot of
// the schedule, and one bucket whole in memory. TFLOP/s is reported twice: TFLOPSPerGPU counts executed FLOPs
// (recomputation included, eq. 4.2), ModelTFLOPSPerGPU counts model FLOPs
// (Megatron-LM's num_floating_point_operations), the figure published
// tables use; MFU is model FLOPs over peak.
//
// FP8 (model.FP8) is costed as Transformer Engine runs it: the linear
// layers' GEMMs at the FP8 rate, at the same sustained fraction of the
// GPU's measured FP8 matmul rate as 16-bit GEMMs of theirs, plus TE's
// casts of each GEMM's input forward and output gradient backward
// (FP8CastBytesPerValue, memory-bound; model.GEMM.Inputs/Outputs); the
// attention core and the output layer in bf16; weights, activations and
// communication in bf16 except the stored GEMM inputs
// (model.Transformer.LayerActivationBytesAt). Memory counts TE's FP8
// copy of each linear weight and its transpose (FP8WeightCopyBytesPerParam),
// only the transpose when the FP8 copy is the weight
// (plan.Execution.FP8ParamGather, as NVIDIA's recipes and the published
// FP8 rows below run). The expert token exchange follows
// the dispatcher (plan.Execution.EPDispatcher: alltoall sends every routed
// copy, DeepEP each token once per server) and, with Overlap.EPComm, hides
// behind another microbatch's compute. With expert parallelism each
// expert is whole on its rank (etp = 1, Megatron-Core's MoE parallel
// folding as Megatron-Bridge's recipes run it). ZeRO-3's per-layer weight
// gathers are prefetched behind the compute with Overlap.ParamGather.
//
// Fit and held-out data. The two constants of the default efficiency curve
// (DefaultKernelLatencySeconds, DefaultSustainedMatmulFraction) were fitted
// on dissertation Table 4.1 (A100); Table 4.2 is held out
// (calibration_test.go). Nothing was fitted on the H100 runs of
// testdata/published_runs.json: all 21 are held out (an FP8-only fraction
// fitted on the two NeMo 24.07 rows was retired once TE's casts were
// costed). published_test.go compares throughput in tokens/s per GPU where
// the source gives it — the sources' TFLOP/s use different attention-FLOP
// conventions (NeMo 24.07 full, Megatron-Bridge 25.11/26.02 causal) — and
// model TFLOP/s for the Llama 3 paper. Errors now (in brackets before this
// round: TFLOP/s against TFLOP/s, the fitted FP8 fraction, ZeRO-1 and
// searched recomputation for the Llama 3 paper):
//
//	Llama 3 405B BF16, 8K, 8,192 / 16,384 H100 (paper's ZeRO-2, no
//	  recomputation, vp 8)                                  −6.1 / −5.3 % (−9.9 / −9.7)
//	  (+7.3 / +7.6 % before ZeRO-2 paid a reduce-scatter per microbatch)
//	Llama 3 405B BF16, 128K, cp 16 (reported only)           +60 % (+29)
//	  (−9.8 / −8.9 / +14.3 % for the three rows if the paper counts the
//	  attention core causal, as Megatron-Bridge does)
//	NeMo 24.07 Llama 3 8B / 70B FP8 (8B reported only)       +23.3 / +6.1 % (+9.1 / −9.2, fitted)
//	NeMo 24.07 Llama 2 7B / 13B / 70B FP8 (new)               +9.7 / +8.5 / −5.8 %
//	NeMo 24.07 GPT-3 175B FP8, 128 / 512 H100 (new)           −4.2 / −6.2 %
//	Megatron-Bridge 25.11 Llama 3 8B FP8, FSDP                +3.0 % (−8.6)
//	Megatron-Bridge 25.11 / 26.02 Llama 3 70B FP8             −4.7 / −4.8 % (−12.1 / −12.2)
//	Megatron-Bridge 25.11 / 26.02 Llama 3.1 405B FP8, cp 2   +7.7 / +6.2 % (−7.6 / −9.6)
//	Megatron-Bridge 25.11 / 26.02 Qwen3 235B-A22B FP8, ep 32 +19.2 / +16.5 % (−5.2 / −7.6)
//	  (the recipe's alltoall dispatcher with moe_a2a_overlap)
//	Megatron-MoE-ModelZoo Qwen3 235B BF16, tp2 ep32, DeepEP  +7.1 %
//	Megatron-MoE-ModelZoo Qwen3 235B BF16, tp4 ep8 (reported) +93 %
//	Megatron-Bridge Qwen3 30B-A3B FP8, ep 8 (reported only)  +156 / +174 % (+212 / +231)
//
// Measured in tokens/s, the previous model was further off than its
// TFLOP/s suggested: −18.7 % (8B FSDP), −18.0 / −18.1 % (70B), −11.1 /
// −13.2 % (405B) and −16.0 / −18.0 % (Qwen3 235B) on the Megatron-Bridge
// rows. Dense runs are asserted within 10 %, MoE runs whose all-to-all
// crosses servers within 20 %; why the others
// are only reported, and what the MoE model is missing (a cost of the
// expert path that scales with the routed copies), is in published_test.go.
//
// Pipeline stages split the layers by ChunkLayers: the chunks one layer
// short sit at both ends (the first and last stages also hold the
// embedding and output layer, and the first stashes the most
// microbatches), as Megatron-LM's first/last-stage layer counts and the
// Llama 3 paper do.
//
// Units: seconds, bytes, bytes/s and FLOP/s throughout.
package cost
