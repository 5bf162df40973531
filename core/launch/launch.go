// Package launch writes a run plan as the launch artifacts of the engines
// people train with: Megatron-LM's arguments (and the torchrun command, the
// Slurm batch script and the Kubeflow PyTorchJob that start it), a
// torchtitan job TOML and a DeepSpeed config. Every degree, the layer split,
// the microbatching, recomputation, sharding, overlap, precision and — for
// Megatron-LM — the whole architecture travel; what an engine cannot run
// as planned is an error wrapping ErrNotExpressible that names the plan's
// field, its value and why. The flag and key names are the engines' own,
// listed with their sources under testdata/.
package launch

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// Formats are the artifacts Artifact writes, in the order a user meets them.
var Formats = []string{"megatron", "torchrun", "slurm", "k8s", "torchtitan", "deepspeed"}

// DefaultImage is the container image a PyTorchJob names unless told another.
const DefaultImage = "megatron-lm:latest"

// input is what every exporter reads: the execution, kept apart from the
// model (application) and the cluster (system), plus the stages, which
// carry PipeDream's per-stage replica counts and the layer split.
type input struct {
	Exec    plan.Execution
	Model   plan.Model
	Cluster plan.Cluster
	Stages  []plan.Stage
	// Microbatches is the plan's m per pipeline and step.
	Microbatches int
	// Image is the container image of the k8s manifest.
	Image string
}

// Artifact writes p as the launch artifact of format (one of Formats);
// image names the PyTorchJob's container ("" is DefaultImage). It does not
// check that the plan's GPUs match its cluster (the runner's consistency
// check does, before it exports).
func Artifact(format string, p *plan.Plan, image string) (string, error) {
	if p == nil || len(p.Stages) == 0 {
		return "", errors.New("plan: no stages to launch")
	}
	if image == "" {
		image = DefaultImage
	}
	return export(format, input{Exec: p.Execution, Model: p.Model, Cluster: p.Cluster, Stages: p.Stages,
		Microbatches: p.Execution.Microbatches(), Image: image})
}

// export renders in as the artifact of format.
func export(format string, in input) (string, error) {
	switch format {
	case "megatron":
		args, err := megatronArgs(in)
		if err != nil {
			return "", err
		}
		return megatronCommand(in, args), nil
	case "torchtitan":
		return torchtitanTOML(in)
	case "deepspeed":
		return deepspeedJSON(in)
	case "torchrun", "slurm", "k8s":
		args, err := megatronArgs(in)
		if err != nil {
			return "", err
		}
		switch format {
		case "torchrun":
			return torchrunCommand(in, args), nil
		case "slurm":
			return sbatchScript(in, args), nil
		}
		return pytorchJobYAML(in, args)
	}
	return "", fmt.Errorf("--format: must be one of %s, got %q", strings.Join(Formats, ", "), format)
}

// ErrNotExpressible marks a plan an engine cannot run as planned.
var ErrNotExpressible = errors.New("not expressible")

// notExpressible reports that engine cannot express field = value, and why.
func notExpressible(engine, field string, value any, why string) error {
	return fmt.Errorf("%s: %w: %s = %v: %s", engine, ErrNotExpressible, field, value, why)
}

// common checks what every engine needs: a valid execution, replicas that
// are whole pipelines, and the microbatching the engine derives
// (B/(d·b)) matching the plan's. It returns the data-parallel width d.
// That the GPUs match the cluster's is the runner's consistency check.
func common(engine string, in input) (int, error) {
	e := in.Exec
	if err := e.Validate(); err != nil {
		return 0, err
	}
	r := in.Stages[0].Replicas
	for i, s := range in.Stages {
		if s.Replicas != r {
			return 0, notExpressible(engine, fmt.Sprintf("stages[%d].replicas", i), s.Replicas,
				fmt.Sprintf("stage 0 has %d replicas; engines replicate whole pipelines (data parallelism), not single stages (PipeDream's 1F1B-RR)", r))
		}
	}
	d := e.DP * r
	if m := e.GlobalBatch / (d * e.MicrobatchSize); m*d*e.MicrobatchSize != e.GlobalBatch || m != in.Microbatches {
		return 0, notExpressible(engine, "execution.global_batch", e.GlobalBatch,
			fmt.Sprintf("the engine runs global batch %d / (data parallel %d × microbatch size %d) microbatches per step", e.GlobalBatch, d, e.MicrobatchSize))
	}
	return d, nil
}

// Engine is a training engine the artifacts start, and the pipeline
// schedules it runs.
type Engine struct {
	// ID is its exporter's name (megatron also writes torchrun, slurm and
	// k8s, which start Megatron-LM); Name is what people call it.
	ID, Name string
	// Schedules are the pipeline schedules it runs.
	Schedules []schedule.Kind
}

// Engines are the engines of Formats: Megatron-LM, with its 1F1B and
// interleaved 1F1B (megatron/core/pipeline_parallel/schedules.py);
// torchtitan, with torch.distributed.pipelining's GPipe, 1F1B,
// Interleaved1F1B, ZBVZeroBubble and DualPipeV (torchtitanSchedules); DeepSpeed,
// with its TrainSchedule's 1F1B.
var Engines = []Engine{
	{"megatron", "Megatron-LM", []schedule.Kind{schedule.OneFOneB, schedule.Interleaved}},
	{"torchtitan", "torchtitan", []schedule.Kind{schedule.GPipe, schedule.OneFOneB, schedule.Interleaved, schedule.ZBV, schedule.DualPipeV}},
	{"deepspeed", "DeepSpeed", []schedule.Kind{schedule.OneFOneB}},
}

// pipelineSchedule checks that the execution's schedule is one the engine
// runs (Engines) when it pipelines (pp > 1); without pipelining every
// synchronous kind is plain gradient accumulation.
func pipelineSchedule(engine string, e plan.Execution) error {
	var allowed []schedule.Kind
	if i := slices.IndexFunc(Engines, func(en Engine) bool { return en.ID == engine }); i >= 0 {
		allowed = Engines[i].Schedules
	}
	if slices.Contains(allowed, e.Schedule) {
		return nil
	}
	switch e.Schedule {
	case schedule.TwoBW, schedule.PipeDream, schedule.OneFOneBRR:
		return notExpressible(engine, "execution.schedule", e.Schedule, "an asynchronous schedule (stale or stashed weights); the engine trains synchronously with a flush")
	}
	if e.PP == 1 {
		return nil
	}
	return notExpressible(engine, "execution.schedule", e.Schedule, fmt.Sprintf("the engine's pipeline schedules are %v", allowed))
}

// layersPerChunk is the layers of each of the pp·v model chunks for an
// engine that only splits evenly (DeepSpeed); uneven stages are refused.
// Megatron-LM takes any split (megatronPipelineSplit), torchtitan fewer
// layers at the ends (torchtitanPipelineSplit).
func layersPerChunk(engine string, in input) (int, error) {
	n := chunkLayers(in.Stages[0])
	for i, s := range in.Stages {
		if k := chunkLayers(s); k != n {
			return 0, notExpressible(engine, fmt.Sprintf("stages[%d]", i), fmt.Sprintf("layers %d-%d", s.FirstLayer, s.LastLayer),
				fmt.Sprintf("%d layers where stage 0 has %d; the engine splits the layers evenly over the pipeline", k, n))
		}
	}
	return n, nil
}

// transformer returns the model's transformer dimensions, which the
// model-building engines need.
func transformer(engine string, in input) (*model.Transformer, error) {
	t := in.Model.Transformer
	if t == nil {
		return nil, notExpressible(engine, "model.transformer", "absent", fmt.Sprintf("the plan is over a layer profile (%s); the engine builds transformers from their dimensions", in.Model.Name))
	}
	return t, nil
}

// ffnSize is the transformer's feed-forward inner size (0 in the spec means 4h).
func ffnSize(t *model.Transformer) int {
	if t.FFN == 0 {
		return 4 * t.Hidden
	}
	return t.FFN
}

// precision is the model's training precision ("" is bf16).
func precision(t *model.Transformer) model.Precision {
	if t.Precision == "" {
		return model.BF16
	}
	return t.Precision
}
