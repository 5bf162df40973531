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
// upper blocks and stores no s×s scores; without it the attention core's
// kernels each take the longer of their FLOPs and their traffic over the
// s×s scores (unfusedAttentionSeconds: 12 bytes per score forward, 17
// backward in 16-bit with dropout); the column-parallel layers' backward
// collectives hide behind their GEMMs with plan.Overlap.TPBackward
// (Megatron-LM's asynchronous all-reduce, 2022); an unfused gradient
// accumulation (plan.Execution.UnfusedGradAccumulation, the 2021 runs)
// costs a memory-bound pass per microbatch; context parallelism exchanges K/V
// as plan.Execution.CPComm says: the ring (p2p) is exposed only where it
// exceeds the attention compute, the all-gather of the whole sequence's
// K/V (the Llama 3 paper's) and the all-to-alls of Q, K, V and the output
// (Ulysses) are not overlapped, and the all-gather's full K/V and their
// gradients take a layer's working memory; expert all-to-alls
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
// testdata/published_runs.json: all 23 are held out (an FP8-only fraction
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
//	Llama 3 405B BF16, 128K, cp 16 all-gather (reported only) +49.4 % (+29)
//	  (−9.8 / −8.9 / +6.6 % for the three rows if the paper counts the
//	  attention core causal, as Megatron-Bridge does; at 128K +60 %, causal
//	  +14.3 %, before its all-gather context parallelism was costed)
//	NeMo 24.07 Llama 3 8B / 70B FP8 (8B reported only)       +23.3 / +6.1 % (+9.1 / −9.2, fitted)
//	NeMo 24.07 Llama 2 7B / 13B / 70B FP8 (new)               +9.7 / +8.5 / −5.8 %
//	NeMo 24.07 GPT-3 175B FP8, 128 / 512 H100 (new)           −4.2 / −6.2 %
//	Megatron-Bridge 25.11 Llama 3 8B FP8, FSDP                +3.0 % (−8.6)
//	Megatron-Bridge 25.11 / 26.02 Llama 3 70B FP8             −4.7 / −4.8 % (−12.1 / −12.2)
//	Megatron-Bridge 25.11 / 26.02 Llama 3.1 405B FP8, cp 2   +7.7 / +6.2 % (−7.6 / −9.6)
//	Megatron-Bridge 25.11 / 26.02 Qwen3 235B-A22B FP8, ep 32 +19.2 / +16.5 % (−5.2 / −7.6)
//	  (the recipe's alltoall dispatcher with moe_a2a_overlap)
//	Megatron-MoE-ModelZoo Qwen3 235B BF16, DeepEP:
//	  tp2 ep32 pp8 (across servers)                          +7.1 %
//	  tp2 ep8, Megatron-FSDP, microbatch 4 (new)              +9.6 %
//	  tp4 ep8 pp8 (reported only)                            +93 %
//	  tp2 ep8 pp32 vp3, alltoall (new, reported only)        +46 %
//	Megatron-Bridge Qwen3 30B-A3B FP8, ep 8 (reported only)  +156 / +174 % (+212 / +231)
//
// Measured in tokens/s, the previous model was further off than its
// TFLOP/s suggested: −18.7 % (8B FSDP), −18.0 / −18.1 % (70B), −11.1 /
// −13.2 % (405B) and −16.0 / −18.0 % (Qwen3 235B) on the Megatron-Bridge
// rows. Dense runs are asserted within 10 %, MoE runs within 20 % except
// those below; why each reported row is not asserted is in
// published_test.go.
//
// The A100 is the exception to the paragraph above since the Korthikanti
// round: its curve takes A100SustainedMatmulFraction (0.805), refitted on
// Table 4.1 alone with those 2021 runs costed as they ran (unfused
// attention, synchronous tensor-parallel all-reduces, a gradient-
// accumulation pass per microbatch: mean error 3.9 %, worst +6.9 %; Table
// 4.2, held out, worst +8.1 %); DefaultSustainedMatmulFraction (0.75, the
// earlier A100 fit) serves every other GPU, the H100 included.
//
// Korthikanti et al. 2022 (A100, testdata/korthikanti2022.json, from
// Calculon's transcription) is held out too: Table 5's eight iteration
// times (22B–1T, full recomputation and sequence parallelism + selective
// recomputation), costed as Megatron-LM ran them in 2022 (unfused
// attention, the asynchronous tensor-parallel backward, fused gradient
// accumulation), are predicted with a mean absolute error of 5.1 % and at
// worst −8.1 % (22B), short of issue 10's 3 % / 6 % (7.2 % / +14.6 %
// before this round); the speed-up of sequence parallelism + selective
// recomputation over full recomputation within 3.1 points on every model;
// Figure 1's per-GPU memory within 9 %. What is left (22B and 175B
// 4–8 % fast, 530B and 1T up to 6 % slow) is in korthikanti_test.go.
//
// Mixture of experts inside one server. Where the expert exchange stays
// inside a server, the published runs ran 1.10× (the FSDP row) to 2.7×
// slower than predicted, while cross-server MoE runs are within 20 % and
// dense runs within 10 %. Every such prediction carries Prediction.Caveat
// (localExperts), because no physical cost the model leaves out closes the
// gap. Checked, per token and MoE layer (forward and backward), against
// the gap of 2.4 µs (Qwen3 30B-A3B, 25.11) and 4.9 µs (235B tp4 ep8):
//   - memory-bound work: the model already charges at the achievable HBM
//     bandwidth (DefaultMemoryBandwidthEfficiency) Megatron-Core's
//     permutation and unpermutation (moe_utils.py permute/unpermute, fused
//     in Transformer Engine: each token read and its topk copies written,
//     and back, weighted by the router's probabilities), every elementwise
//     pass over the stored activations (the routed copies' SwiGLU inputs
//     and outputs included), the router's softmax/top-k and TE's FP8
//     casts: 725 KB per token and layer for the 30B-A3B (0.31 µs), 1.06 MB
//     for the 235B at tp 4 (0.45 µs). The gap would take 5.6 MB and 11.4 MB
//     more, where what the count leaves out is under 0.2 MB: FP8 current
//     scaling's amax pass over each cast input (2 B per value, 129 KB for
//     the 30B-A3B), the router's aux loss (a few KB); the dispatcher's
//     buffer copies run inside its NVLink kernels;
//   - small grouped GEMMs: the expert GEMMs are costed per local expert on
//     its share of the tokens (gemmSeconds, TestExpertGEMMsPerExpert); the
//     30B-A3B's are 26 and 13 GFLOP (4,096 tokens per expert), which the
//     curve runs at 47 and 43 % of FP8 peak: the gap would need a tenth;
//   - the NVLink exchange: the gap would need it at about 55 GB/s per GPU,
//     where DeepEP's intranode kernels measure 150–340 GB/s on Hopper
//     (github.com/deepseek-ai/DeepEP issue 16).
//
// What the data point at is the host. The same H100 30B-A3B configuration
// ran 10,494 tokens/s in Megatron-Bridge 25.09 with token dropping (its
// precision not printed; predicted in FP8, +28 %) and 5,275 dropless in
// 25.11; on B200 at microbatch 1, 18,066 (token-drop) and 9,299
// (dropless), while GB200 at microbatch 4 ran both alike (22,775 and
// 23,766; NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md
// at commit 0a25f911b2ed6c6905a539504fdb8e5b40e3438b, sections 25.09 and
// 25.11). Dropless, the host waits for the GPU in every MoE layer:
// Megatron-Core's alltoall dispatcher before the expert all-to-all, to
// read the split sizes (NVIDIA/Megatron-LM
// megatron/core/transformer/moe/token_dispatcher.py at commit
// 0014f13713bfa38a8bab4ae11edd6917d35165ce, cuda sync point
// "before_ep_alltoall"; drop-and-pad needs none), DeepEP's dispatch for
// the received counts ("the CPU will wait for GPU's signal", the
// comment on dispatch in DeepEP's README example). The CPU then cannot queue kernels ahead, and the launch time of
// the expert path's many small kernels is exposed wherever the GPU's work
// per layer and microbatch is short (5–13 ms predicted in the reported
// rows, 43 ms in the FSDP row). It is a lead, not a model: the two 30B-A3B
// rows (microbatch 2 and 1) cost the same per token, which a fixed host
// time per layer would not give. Costing it needs the host's time per
// launched kernel and the kernels per layer of each software release,
// which no source gives; the model leaves it out rather than fit a
// constant to these rows.
//
// Pipeline stages split the layers by ChunkLayers: the chunks one layer
// short sit at both ends (the first and last stages also hold the
// embedding and output layer, and the first stashes the most
// microbatches), as Megatron-LM's first/last-stage layer counts and the
// Llama 3 paper do.
//
// Units: seconds, bytes, bytes/s and FLOP/s throughout.
package cost
