package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"

	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
	"pipeplan/gpuprofiles"
	"pipeplan/internal/atomicfile"
)

func init() {
	register("transformer", command{
		summary: "plan a GPT-style transformer with tensor, pipeline and data parallelism (PTD-P search, or one configuration)",
		run:     runTransformer,
	})
}

// transformerMemory is the memory of the most loaded GPU, in bytes.
type transformerMemory struct {
	PerGPUPeakBytes          float64 `json:"per_gpu_peak_bytes"`
	WeightsAndOptimizerBytes float64 `json:"weights_and_optimizer_bytes"`
	ActivationBytes          float64 `json:"activation_bytes"`
	ReserveBytes             float64 `json:"reserve_bytes"`
	CapacityBytes            float64 `json:"capacity_bytes"`
}

// transformerConfig is one configuration with its predictions.
type transformerConfig struct {
	TP                int               `json:"tp"`
	PP                int               `json:"pp"`
	DP                int               `json:"dp"`
	Microbatch        int               `json:"microbatch"`
	Interleave        int               `json:"interleave"`
	Microbatches      int               `json:"microbatches"`
	Recompute         model.Recompute   `json:"recompute"`
	SequenceParallel  bool              `json:"sequence_parallel"`
	FLOPsPerIteration float64           `json:"flops_per_iteration"`
	IterationSeconds  float64           `json:"iteration_seconds"`
	SamplesPerSecond  float64           `json:"samples_per_second"`
	TokensPerSecond   float64           `json:"tokens_per_second"`
	TFLOPSPerGPU      float64           `json:"tflops_per_gpu"`
	MFU               float64           `json:"mfu"`
	BubbleFraction    float64           `json:"bubble_fraction"`
	Memory            transformerMemory `json:"memory"`
	Fits              bool              `json:"fits"`
	Reason            string            `json:"reason,omitempty"`
}

// transformerCluster describes the cluster used, bandwidths per GPU and direction.
type transformerCluster struct {
	GPU                           string  `json:"gpu"`
	GPUs                          int     `json:"gpus"`
	GPUsPerNode                   int     `json:"gpus_per_node"`
	Nodes                         int     `json:"nodes"`
	IntraNodeBandwidthBytesPerSec float64 `json:"intra_node_bandwidth_bytes_per_sec"`
	InterNodeBandwidthBytesPerSec float64 `json:"inter_node_bandwidth_bytes_per_sec"`
	MemoryBytesPerGPU             float64 `json:"memory_bytes_per_gpu"`
	PeakFLOPSPerGPU               float64 `json:"peak_flops_per_gpu"`
}

// transformerOutput is the result: the chosen configuration's fields at the
// top level (the evaluated one, or the best of a search) and the ranked
// candidates.
type transformerOutput struct {
	Mode        string             `json:"mode"`
	Model       model.Transformer  `json:"model"`
	Cluster     transformerCluster `json:"cluster"`
	GlobalBatch int                `json:"global_batch"`
	Defaults    []string           `json:"defaults"`
	Params      float64            `json:"params"`
	transformerConfig
	Evaluated  int                 `json:"evaluated"`
	Feasible   int                 `json:"feasible"`
	Candidates []transformerConfig `json:"candidates"`
	Infeasible []transformerConfig `json:"infeasible,omitempty"`
}

// transformerDefaults explains each defaulted flag, printed with the result.
var transformerDefaults = map[string]string{
	"seq":                  "seq 2048 (dissertation §4.5.1)",
	"vocab":                "vocab 51200 (dissertation §4.5.1)",
	"precision":            "precision bf16",
	"gpu":                  "gpu nvidia-a100-sxm4-80gb",
	"gpus-per-node":        "gpus-per-node 8 (DGX-class server)",
	"inter-node-bandwidth": "inter-node-bandwidth 25e9 bytes/s per GPU (one 200 Gb/s NIC per GPU)",
}

func runTransformer(args []string, stdout io.Writer) error {
	fs := newFlagSet("transformer")
	name := fs.String("name", "", "model name carried by an exported plan (default: the dimensions, e.g. \"transformer l=96 h=12288 a=96\")")
	layers := fs.Int("layers", 0, "number of transformer layers l (required)")
	hidden := fs.Int("hidden", 0, "hidden size h (required)")
	heads := fs.Int("heads", 0, "attention heads a (required)")
	seq := fs.Int("seq", 2048, "sequence length s")
	vocab := fs.Int("vocab", 51200, "vocabulary size V")
	ffn := fs.Int("ffn", 0, "feed-forward size (0: 4 × hidden)")
	precision := fs.String("precision", string(model.BF16), "training precision: fp32, fp16, bf16 or fp8")
	gpuID := fs.String("gpu", "nvidia-a100-sxm4-80gb", "GPU id (see pipeplan gpus)")
	gpus := fs.Int("gpus", 0, "number of GPUs n (required)")
	perNode := fs.Int("gpus-per-node", 8, "GPUs per node (NVLink inside a node)")
	interBW := fs.Float64("inter-node-bandwidth", hw.DefaultInterNodeBandwidthBytesPerSec, "bandwidth between nodes per GPU and direction, bytes/s")
	batch := fs.Int("batch", 0, "global batch size B, in sequences (required)")
	tp := fs.Int("tp", 0, "tensor-parallel size t (omit to search)")
	pp := fs.Int("pp", 0, "pipeline-parallel size p (omit to search)")
	micro := fs.Int("microbatch", 0, "microbatch size b (omit to search)")
	interleave := fs.Int("interleave", 0, "model chunks per GPU v (omit to search)")
	recompute := fs.String("recompute", "", "activation recomputation: none, selective or full (omit to search)")
	seqPar := fs.Bool("sequence-parallel", false, "shard layer-norm and dropout activations over the tensor-parallel GPUs")
	crossNode := fs.Bool("allow-cross-node-tp", false, "let the search put tensor parallelism across nodes")
	top := fs.Int("top", 10, "number of candidates to list")
	exportPlan := fs.String("export-plan", "", "write the chosen configuration as a core/plan JSON file")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("transformer: unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range []string{"layers", "hidden", "heads", "gpus", "batch"} {
		if !set[name] {
			return fmt.Errorf("--%s: required", name)
		}
	}
	if *top < 1 {
		return fmt.Errorf("--top: must be >= 1, got %d", *top)
	}
	tr := model.Transformer{Name: *name, Layers: *layers, Hidden: *hidden, Heads: *heads, Seq: *seq, Vocab: *vocab, FFN: *ffn, Precision: model.Precision(*precision)}
	if err := tr.Validate(); err != nil {
		return err
	}
	if tr.Name == "" {
		tr.Name = fmt.Sprintf("transformer l=%d h=%d a=%d", tr.Layers, tr.Hidden, tr.Heads)
	}
	cluster, err := transformerClusterOf(*gpuID, *gpus, *perNode, *interBW)
	if err != nil {
		return err
	}
	fixed := plan.Execution{
		TP: *tp, PP: *pp, MicrobatchSize: *micro, Interleave: *interleave, GlobalBatch: *batch,
		SequenceParallel: *seqPar, ScatterGather: true,
	}
	if set["recompute"] {
		if fixed.Recompute, err = model.ParseRecompute(*recompute); err != nil {
			return err
		}
	}
	var res partition.PTDPResult
	mode := "search"
	if set["tp"] && set["pp"] && set["microbatch"] && set["interleave"] && set["recompute"] {
		mode = "evaluate"
		res, err = evaluateTransformer(tr, cluster, fixed)
	} else {
		res, err = partition.SearchPTDP(context.Background(), tr, cluster, partition.PTDPOptions{Fixed: fixed, AllowCrossNodeTP: *crossNode}, nil)
	}
	if err != nil {
		return err
	}
	out := transformerOutput{
		Mode: mode, Model: tr, GlobalBatch: *batch, Params: tr.Params(),
		Evaluated: len(res.Candidates) + len(res.Infeasible), Feasible: len(res.Candidates),
	}
	out.Cluster = transformerClusterInfo(cluster, tr)
	for _, name := range []string{"seq", "vocab", "precision", "gpu", "gpus-per-node", "inter-node-bandwidth"} {
		if !set[name] {
			out.Defaults = append(out.Defaults, transformerDefaults[name])
		}
	}
	out.Defaults = append(out.Defaults, "optimizer: mixed-precision Adam, no ZeRO; scatter/gather on (§4.4.1); memory reserve for CUDA context and fragmentation")
	chosen := append(res.Candidates, res.Infeasible...)[0]
	out.transformerConfig = transformerConfigOf(chosen)
	for i, c := range res.Candidates {
		if i == *top {
			break
		}
		out.Candidates = append(out.Candidates, transformerConfigOf(c))
	}
	for i, c := range res.Infeasible {
		if i == *top {
			break
		}
		out.Infeasible = append(out.Infeasible, transformerConfigOf(c))
	}
	if *exportPlan != "" {
		if err := exportPTDPPlan(*exportPlan, tr, cluster, chosen); err != nil {
			return err
		}
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	return printTransformer(stdout, out)
}

// evaluateTransformer predicts the one configuration every degree of which
// the flags gave, as a result with a single candidate (feasible or not).
func evaluateTransformer(tr model.Transformer, c hw.Cluster, cfg plan.Execution) (partition.PTDPResult, error) {
	if cfg.TP < 1 || cfg.PP < 1 || c.GPUs()%(cfg.TP*cfg.PP) != 0 {
		return partition.PTDPResult{}, fmt.Errorf("--tp, --pp: tp·pp must divide the %d GPUs, got %d·%d", c.GPUs(), cfg.TP, cfg.PP)
	}
	cfg.DP = c.GPUs() / (cfg.TP * cfg.PP)
	cand, err := partition.EvaluatePTDP(tr, c, cfg, cost.Options{})
	if err != nil {
		return partition.PTDPResult{}, err
	}
	if cand.Fits {
		return partition.PTDPResult{Candidates: []partition.PTDPCandidate{cand}}, nil
	}
	return partition.PTDPResult{Infeasible: []partition.PTDPCandidate{cand}}, nil
}

// transformerClusterOf builds the cluster the flags describe.
func transformerClusterOf(gpuID string, gpus, perNode int, interBW float64) (hw.Cluster, error) {
	if gpus < 1 {
		return hw.Cluster{}, fmt.Errorf("--gpus: must be >= 1, got %d", gpus)
	}
	if perNode < 1 {
		return hw.Cluster{}, fmt.Errorf("--gpus-per-node: must be >= 1, got %d", perNode)
	}
	if !(interBW > 0) || math.IsInf(interBW, 0) {
		return hw.Cluster{}, fmt.Errorf("--inter-node-bandwidth: must be a finite number > 0 bytes/s, got %v", interBW)
	}
	perNode = min(perNode, gpus)
	if gpus%perNode != 0 {
		return hw.Cluster{}, fmt.Errorf("--gpus: must be a multiple of --gpus-per-node %d, got %d", perNode, gpus)
	}
	g, err := gpuprofiles.ByID(gpuID)
	if err != nil {
		return hw.Cluster{}, fmt.Errorf("--gpu: %w", err)
	}
	return hw.NewCluster(g, perNode, gpus/perNode, interBW)
}

// transformerClusterInfo describes c for the output.
func transformerClusterInfo(c hw.Cluster, tr model.Transformer) transformerCluster {
	peak, _ := c.GPU.Peak(string(tr.TrainingPrecision()))
	return transformerCluster{
		GPU: c.GPU.ID, GPUs: c.GPUs(), GPUsPerNode: c.GPUsPerNode(), Nodes: c.GPUs() / c.GPUsPerNode(),
		IntraNodeBandwidthBytesPerSec: c.Levels[0].BandwidthBytesPerSec,
		InterNodeBandwidthBytesPerSec: c.Levels[1].BandwidthBytesPerSec,
		MemoryBytesPerGPU:             c.GPU.MemoryBytes, PeakFLOPSPerGPU: peak,
	}
}

// transformerConfigOf flattens a candidate into the output fields.
func transformerConfigOf(c partition.PTDPCandidate) transformerConfig {
	p, m := c.Prediction, c.Prediction.Memory
	return transformerConfig{
		TP: c.Config.TP, PP: c.Config.PP, DP: c.Config.DP, Microbatch: c.Config.MicrobatchSize,
		Interleave: c.Config.Interleave, Microbatches: p.Microbatches, Recompute: c.Config.Recompute,
		SequenceParallel: c.Config.SequenceParallel, FLOPsPerIteration: p.FLOPsPerIteration,
		IterationSeconds: p.IterationSeconds, SamplesPerSecond: p.SamplesPerSec, TokensPerSecond: p.TokensPerSec,
		TFLOPSPerGPU: p.TFLOPSPerGPU, MFU: p.MFU, BubbleFraction: p.BubbleFraction,
		Memory: transformerMemory{
			PerGPUPeakBytes:          m.PeakBytes,
			WeightsAndOptimizerBytes: m.WeightBytes + m.GradientBytes + m.OptimizerBytes,
			ActivationBytes:          m.ActivationBytes,
			ReserveBytes:             m.ReserveBytes,
			CapacityBytes:            m.CapacityBytes,
		},
		Fits: c.Fits, Reason: c.Reason,
	}
}

// exportPTDPPlan writes the chosen configuration as a core/plan file.
func exportPTDPPlan(path string, tr model.Transformer, c hw.Cluster, cand partition.PTDPCandidate) error {
	if !cand.Fits {
		return fmt.Errorf("--export-plan: the configuration does not fit: %s", cand.Reason)
	}
	p, err := partition.PTDPPlan(tr, c, cand.Config, cost.Options{})
	if err != nil {
		return err
	}
	data, err := p.Marshal()
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data)
}

// printTransformer prints the result as text: the inputs and defaults, then a table.
func printTransformer(w io.Writer, out transformerOutput) error {
	tr, c := out.Model, out.Cluster
	fmt.Fprintf(w, "model: l=%d h=%d a=%d s=%d V=%d %s, %.1f billion parameters (eq. 4.3)\n",
		tr.Layers, tr.Hidden, tr.Heads, tr.Seq, tr.Vocab, tr.TrainingPrecision(), out.Params/1e9)
	fmt.Fprintf(w, "cluster: %d × %s (%d nodes × %d), %.0f GiB each; %.4g GB/s in a node, %.4g GB/s per GPU between nodes\n",
		c.GPUs, c.GPU, c.Nodes, c.GPUsPerNode, c.MemoryBytesPerGPU/(1<<30), c.IntraNodeBandwidthBytesPerSec/1e9, c.InterNodeBandwidthBytesPerSec/1e9)
	fmt.Fprintf(w, "global batch %d; defaults: ", out.GlobalBatch)
	for i, d := range out.Defaults {
		if i > 0 {
			fmt.Fprint(w, "; ")
		}
		fmt.Fprint(w, d)
	}
	fmt.Fprintln(w)
	if out.Mode == "evaluate" {
		fmt.Fprintln(w, "evaluated the given configuration:")
		return printTransformerConfigs(w, []transformerConfig{out.transformerConfig})
	}
	fmt.Fprintf(w, "searched %d configurations, %d fit; the fastest %d:\n", out.Evaluated, out.Feasible, len(out.Candidates))
	if err := printTransformerConfigs(w, out.Candidates); err != nil {
		return err
	}
	if len(out.Infeasible) > 0 {
		fmt.Fprintln(w, "does not fit (smallest first):")
		return printTransformerConfigs(w, out.Infeasible[:min(3, len(out.Infeasible))])
	}
	return nil
}

// printTransformerConfigs prints configurations as an aligned table.
func printTransformerConfigs(w io.Writer, cs []transformerConfig) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "TP\tPP\tDP\tMICROBATCH\tINTERLEAVE\tRECOMPUTE\tITERATION s\tTFLOP/s/GPU\tMFU\tBUBBLE\tPEAK GiB\tWEIGHTS+OPT GiB\tACTIVATIONS GiB\tNOTE")
	for _, c := range cs {
		note := "fits"
		if !c.Fits {
			note = c.Reason
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%s\t%.4g\t%.1f\t%.3f\t%.3f\t%.1f\t%.1f\t%.1f\t%s\n",
			c.TP, c.PP, c.DP, c.Microbatch, c.Interleave, c.Recompute, c.IterationSeconds, c.TFLOPSPerGPU,
			c.MFU, c.BubbleFraction, c.Memory.PerGPUPeakBytes/(1<<30), c.Memory.WeightsAndOptimizerBytes/(1<<30), c.Memory.ActivationBytes/(1<<30), note)
	}
	return tw.Flush()
}
