package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"pipeplan/app"
	"pipeplan/app/request"
	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/internal/atomicfile"
)

func init() {
	register("partition", command{summary: "partition a layer profile over a hierarchical cluster (PipeDream DP with stage replication, PipeDream-2BW, MadPipe)", run: runPartition})
}

// partitionFlags maps the request fields (request.Plan) to the flags of
// the partition command that set them, for error messages.
var partitionFlags = map[string]string{
	"plan.model": "model", "plan.gpu": "gpu", "plan.planner": "algorithm", "plan.global_batch": "batch",
	"plan.cost_model": "cost-model", "plan.straight": "straight", "plan.memory_bytes": "memory-bytes",
}

// defaultPartitionGPU is the GPU a partition names when neither --gpu nor
// the profile does: PipeDream's V100.
const defaultPartitionGPU = "nvidia-v100-sxm2-16gb"

// runPartition turns the flags into a request.Plan for a layer profile (an
// embedded PipeDream profile, or a file as the page's upload reads it),
// plans it with the application layer (app.Plan, app.PlanProfile: the
// page's and the API's planner) and prints the result: app.Result as JSON,
// or a table.
func runPartition(args []string, stdout io.Writer) error {
	fs := newFlagSet("partition")
	profile := fs.String("profile", "", "layer profile: a JSON layer profile or a PipeDream graph.txt (detected by content)")
	graphMicrobatch := fs.Int("graph-microbatch", 0, "the minibatch size a --profile graph.txt was profiled at (a graph.txt does not record it)")
	name := fs.String("model", "", "an embedded PipeDream profile instead of --profile: "+strings.Join(profileNames(), ", "))
	algorithm := fs.String("algorithm", "pipedream", "pipedream, madpipe, 2bw or best (PipeDream and 2BW, ranked)")
	sizes := fs.String("level-sizes", "4", "workers per level, innermost first (PipeDream's -n), e.g. 4,4")
	bandwidths := fs.String("level-bandwidths", "1e9", "bandwidth per level in bytes/s, innermost first (PipeDream's -b), e.g. 16e9,1.25e9")
	straight := fs.Bool("straight", false, "forbid stage replication (one GPU per stage)")
	memory := fs.Float64("memory-bytes", 0, "memory per GPU in bytes the stages must fit in (0: unlimited)")
	costModel := fs.String("cost-model", request.CostModels[0], "pipeplan (ours) or pipedream (the original optimizer's formulas)")
	exportPlan := fs.String("export-plan", "", "write the chosen partition as a core/plan JSON run plan to this file")
	gpu := fs.String("gpu", "", "GPU id (see pipeplan gpus; default: the profile's device, else "+defaultPartitionGPU+", PipeDream's)")
	batch := fs.Int("batch", 0, "2bw: global batch size B in samples (default: the profiled minibatch × GPUs)")
	asJSON := fs.Bool("json", false, "print JSON (the same as POST /api/v1/plan) instead of a table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("partition: unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	levels, err := parseLevels(*sizes, *bandwidths)
	if err != nil {
		return err
	}
	in := request.Default().Plan
	in.Planner, in.Levels, in.Straight, in.CostModel, in.GlobalBatch = *algorithm, levels, *straight, *costModel, *batch
	in.MemoryBytes = *memory
	if *memory == 0 {
		in.MemoryBytes = request.Unlimited
	}
	prof, err := partitionProfile(&in, *profile, *graphMicrobatch, *name)
	if err != nil {
		return partitionFlagError(err)
	}
	in.GPU = *gpu
	if !set["gpu"] {
		in.GPU = orDefault(prof.Device, defaultPartitionGPU)
	}
	if !set["batch"] {
		gpus := 1
		for _, l := range levels {
			// request.Plan validates the sizes; this only must not overflow.
			gpus = min(gpus*min(max(l.Workers, 1), request.MaxGlobalBatch), request.MaxGlobalBatch)
		}
		in.GlobalBatch = max(prof.MicrobatchSize, 1) * gpus
	}
	var res app.Result
	if in.Model == app.UploadedID {
		res, err = app.PlanProfile(context.Background(), prof, in, nil)
	} else {
		res, err = app.Plan(context.Background(), in)
	}
	if err != nil {
		return partitionFlagError(err)
	}
	if *asJSON {
		err = writeJSON(stdout, res)
	} else {
		err = printPartition(stdout, res)
	}
	if err != nil {
		return err
	}
	if res.Problem != "" {
		return fmt.Errorf("partition: %s", res.Problem)
	}
	if *exportPlan == "" {
		return nil
	}
	if res.Plan == nil {
		return fmt.Errorf("--export-plan: no plan to export: %s", res.NoExport)
	}
	data, err := res.Plan.Marshal()
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(*exportPlan, data)
}

// partitionProfile sets the request's model from --profile (read as the
// page reads an upload) or --model, and returns the layer chain: the
// uploaded one, or the embedded profile's.
func partitionProfile(in *request.Plan, path string, graphMicrobatch int, name string) (model.Profile, error) {
	switch {
	case path != "" && name != "":
		return model.Profile{}, fmt.Errorf("partition: give --profile or --model, not both")
	case name != "":
		id, err := app.ProfilePresetID(name)
		if err != nil {
			return model.Profile{}, err
		}
		in.Model = id
		return app.PresetProfile(id)
	case path == "":
		return model.Profile{}, fmt.Errorf("partition: need --profile FILE or --model NAME (%s)", strings.Join(profileNames(), ", "))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return model.Profile{}, err
	}
	prof, err := app.ParseUploadedProfile(path, data, graphMicrobatch)
	if err != nil {
		return model.Profile{}, fmt.Errorf("--profile: %w", err)
	}
	in.Model = app.UploadedID
	return prof, nil
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// partitionFlagError names the flag that set a request field a validation
// error names, as flagError, with the topology's indexed fields
// (plan.levels[i].workers, plan.levels[i].bandwidth_bytes_per_sec) mapped to
// --level-sizes and --level-bandwidths.
func partitionFlagError(err error) error {
	var fe *request.FieldError
	if errors.As(err, &fe) && strings.HasPrefix(fe.Field, "plan.levels") {
		flagName := "level-sizes"
		if strings.HasSuffix(fe.Field, ".bandwidth_bytes_per_sec") {
			flagName = "level-bandwidths"
		}
		return fmt.Errorf("--%s (%s): %s", flagName, fe.Field, fe.Msg)
	}
	return flagError(err, partitionFlags)
}

// profileNames lists the embedded PipeDream profiles --model takes.
func profileNames() []string {
	var names []string
	for _, m := range app.ProfilePresets() {
		names = append(names, m.Profile)
	}
	return names
}

// parseLevels parses "--level-sizes 4,4 --level-bandwidths 16e9,1.25e9" as
// numbers; request.Plan validates their values.
func parseLevels(sizes, bandwidths string) ([]hw.Level, error) {
	ss, bs := strings.Split(sizes, ","), strings.Split(bandwidths, ",")
	if len(ss) != len(bs) {
		return nil, fmt.Errorf("--level-bandwidths: need one bandwidth per level (%d), got %d", len(ss), len(bs))
	}
	levels := make([]hw.Level, len(ss))
	for i := range ss {
		n, err := strconv.Atoi(strings.TrimSpace(ss[i]))
		if err != nil {
			return nil, fmt.Errorf("--level-sizes[%d]: must be an integer, got %q", i, ss[i])
		}
		b, err := strconv.ParseFloat(strings.TrimSpace(bs[i]), 64)
		if err != nil || math.IsNaN(b) || math.IsInf(b, 0) {
			return nil, fmt.Errorf("--level-bandwidths[%d]: must be a number of bytes/s, got %q", i, bs[i])
		}
		levels[i] = hw.Level{Workers: n, BandwidthBytesPerSec: b}
	}
	return levels, nil
}

// printPartition prints the result as text: PipeDream's partition, MadPipe's
// allocation, or the ranked candidates (2BW, best) and the chosen plan's
// stages.
func printPartition(w io.Writer, res app.Result) error {
	if res.Problem != "" {
		fmt.Fprintf(w, "model %s: %d GPUs: no plan: %s\n", res.Model, res.GPUs, res.Problem)
		return nil
	}
	switch {
	case res.PipeDream != nil:
		return printPipeDream(w, res)
	case res.MadPipe != nil:
		return printMadPipe(w, res)
	}
	fmt.Fprintf(w, "model %s: %d GPUs, %d configurations, the fastest first\n", res.Model, res.GPUs, res.Evaluated)
	tw := newTable(w)
	fmt.Fprintln(tw, "PLANNER\tDP\tPP\tSCHEDULE\tRECOMPUTE\tMICROBATCH\tGLOBAL BATCH\tSAMPLES/s\tMEMORY/GPU GB")
	for _, c := range res.Candidates {
		e := c.Execution
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%d\t%d\t%.4g\t%.2f\n", c.Planner, e.DP, e.PP, e.Schedule, e.Recompute,
			e.MicrobatchSize, e.GlobalBatch, c.SamplesPerSecond, c.Memory.PeakBytes/1e9)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if res.Plan == nil {
		return nil
	}
	fmt.Fprintf(w, "stages of candidate %d (%s):\n", res.Selected, res.Plan.Planner)
	tw = newTable(w)
	fmt.Fprintln(tw, "STAGE\tLAYERS\tREPLICAS")
	for q, s := range res.Plan.Stages {
		fmt.Fprintf(tw, "%d\t%d-%d\t%d\n", q, s.FirstLayer, s.LastLayer, s.Replicas)
	}
	return tw.Flush()
}

// printPipeDream prints PipeDream's partition: replicated stages (§2.4.1).
func printPipeDream(w io.Writer, res app.Result) error {
	pd := res.PipeDream
	states := pd.Stages[len(pd.Stages)-1].LastLayer + 1
	fmt.Fprintf(w, "model %s: %d states, %d GPUs, cost model %s\n", res.Model, states, pd.GPUs, pd.CostModel)
	fmt.Fprintf(w, "bottleneck %.6g s per minibatch (data parallel %.6g s, one GPU %.6g s), NOAM %d\n",
		pd.BottleneckSeconds, pd.DataParallelSeconds, pd.SingleStageSeconds, pd.NOAM)
	tw := newTable(w)
	fmt.Fprintln(tw, "STAGE\tLAYERS\tREPLICAS\tCOMPUTE s\tPARAMS MB\tIN FLIGHT\tMEMORY/GPU GB")
	for q, s := range pd.Stages {
		fmt.Fprintf(tw, "%d\t%d-%d\t%d\t%.6g\t%.1f\t%d\t%.2f\n", q, s.FirstLayer, s.LastLayer, s.Replicas,
			s.ComputeSeconds, s.ParameterBytes/1e6, s.InFlight, s.MemoryBytes/1e9)
	}
	return tw.Flush()
}

// printMadPipe prints MadPipe's allocation: stages on GPUs, several on the
// special one (madpipe-2020 §4.2), and the 1F1B* period.
func printMadPipe(w io.Writer, res app.Result) error {
	mp := res.MadPipe
	fmt.Fprintf(w, "model %s: %d GPUs at %.3g GB/s (MadPipe)\n", res.Model, res.GPUs, mp.BandwidthBytesPerSec/1e9)
	fmt.Fprintf(w, "period %.6g s per minibatch (allocation load %.6g s, target period %.6g s)\n",
		mp.PeriodSeconds, mp.AllocationPeriodSeconds, mp.TargetPeriodSeconds)
	tw := newTable(w)
	fmt.Fprintln(tw, "STAGE\tLAYERS\tGPU\tSPECIAL\tCOMPUTE s\tACTIVATIONS\tGPU MEMORY GB")
	for i, s := range mp.Stages {
		fmt.Fprintf(tw, "%d\t%d-%d\t%d\t%v\t%.6g\t%d\t%.2f\n", i, s.FirstLayer, s.LastLayer, s.Processor, s.Special,
			s.ComputeSeconds, s.Activations, mp.GPUMemoryBytes[s.Processor]/1e9)
	}
	return tw.Flush()
}
