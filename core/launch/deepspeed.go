package launch

import (
	"encoding/json"

	"pipeplan/core/model"
)

// deepspeedJSON is a DeepSpeed config (deepspeed.ai/docs/config-json):
// batch sizes, ZeRO, precision, the pipeline engine's stages and AutoTP.
func deepspeedJSON(in input) (string, error) {
	const engine = "deepspeed"
	d, err := common(engine, in)
	if err != nil {
		return "", err
	}
	e := in.Exec
	switch {
	case e.Interleave > 1:
		return "", notExpressible(engine, "execution.interleave", e.Interleave, "DeepSpeed's pipeline engine runs one chunk per stage")
	case e.CP > 1:
		return "", notExpressible(engine, "execution.cp", e.CP, "context parallelism is not a DeepSpeed config setting")
	case e.EP > 1:
		return "", notExpressible(engine, "execution.ep", e.EP, "expert parallelism is set on the model's MoE layers in code, not in the config")
	case e.ETP > 0 && e.ETP != e.TP:
		return "", notExpressible(engine, "execution.etp", e.ETP, "expert tensor parallelism is set on the model's MoE layers in code, not in the config")
	case e.SequenceParallel:
		return "", notExpressible(engine, "execution.sequence_parallel", true, "Megatron-style sequence parallelism is not a DeepSpeed config setting")
	case e.Recompute == model.RecomputeSelective:
		return "", notExpressible(engine, "execution.recompute", e.Recompute, "DeepSpeed checkpoints whole layers (pipeline.activation_checkpoint_interval)")
	case e.RecomputeLayers > 0:
		return "", notExpressible(engine, "execution.recompute_layers", e.RecomputeLayers, "DeepSpeed's activation_checkpoint_interval checkpoints every k-th layer, not the first layers of each stage; plan with recompute_layers 0 (every layer)")
	case e.Overlap.ParamGather:
		return "", notExpressible(engine, "execution.overlap.param_gather", true, "not a DeepSpeed config setting")
	}
	if err := pipelineSchedule(engine, e); err != nil {
		return "", err
	}
	// The layer split is PipelineModule's partition_method, set in code;
	// only an even one ("uniform") goes without saying.
	if _, err := layersPerChunk(engine, in); err != nil {
		return "", err
	}
	interval := 0
	if e.Recompute == model.RecomputeFull {
		interval = 1
	}
	cfg := map[string]any{
		"train_batch_size":               e.GlobalBatch,
		"train_micro_batch_size_per_gpu": e.MicrobatchSize,
		"gradient_accumulation_steps":    e.GlobalBatch / (d * e.MicrobatchSize),
		"zero_optimization":              map[string]any{"stage": e.ZeRO, "overlap_comm": e.Overlap.GradReduce},
		"pipeline":                       map[string]any{"stages": e.PP, "activation_checkpoint_interval": interval},
		"tensor_parallel":                map[string]any{"autotp_size": e.TP},
	}
	if t := in.Model.Transformer; t != nil {
		switch p := precision(t); p {
		case model.BF16:
			cfg["bf16"] = map[string]any{"enabled": true}
		case model.FP16:
			cfg["fp16"] = map[string]any{"enabled": true}
		case model.FP32:
		default:
			return "", notExpressible(engine, "model.transformer.precision", p, "DeepSpeed's config sets bf16 or fp16")
		}
	}
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return "", err
	}
	return string(out) + "\n", nil
}
