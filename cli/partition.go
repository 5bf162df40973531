package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/partition"
	"pipeplan/core/plan"
	"pipeplan/internal/atomicfile"
	"pipeplan/modelprofiles"
)

func init() {
	register("partition", command{summary: "partition a layer profile over a hierarchical cluster (PipeDream DP with stage replication, MadPipe)", run: runPartition})
}

// partitionInput is a loaded model: the DP's cuts and what a plan needs.
type partitionInput struct {
	name   string
	cuts   *partition.Cuts
	states *model.States // the graph's states, nil for a chain
	// linear is the layer chain: the profile itself, or the graph
	// linearized by Graph.Chain, which MadPipe and 2BW partition (and
	// PipeDream when there are no states).
	linear model.Profile
	// microbatch is the profiled minibatch size, 0 when unknown.
	microbatch int
	device     string
}

// partitionOutput is the --json form of a partition.
type partitionOutput struct {
	Model     string     `json:"model"`
	Algorithm string     `json:"algorithm"`
	States    int        `json:"states"`
	Levels    []hw.Level `json:"levels"`
	*partition.PipeDreamResult
}

func runPartition(args []string, stdout io.Writer) error {
	fs := newFlagSet("partition")
	profile := fs.String("profile", "", "layer profile: a JSON layer profile or a PipeDream graph.txt (detected by content)")
	name := fs.String("model", "", "an embedded PipeDream profile instead of --profile: "+strings.Join(profileNames(), ", "))
	algorithm := fs.String("algorithm", "pipedream", "pipedream, madpipe or 2bw")
	sizes := fs.String("level-sizes", "4", "workers per level, innermost first (PipeDream's -n), e.g. 4,4")
	bandwidths := fs.String("level-bandwidths", "1e9", "bandwidth per level in bytes/s, innermost first (PipeDream's -b), e.g. 16e9,1.25e9")
	straight := fs.Bool("straight", false, "forbid stage replication (one GPU per stage)")
	memory := fs.Float64("memory-bytes", 0, "memory per GPU in bytes the stages must fit in (0: unlimited)")
	costModel := fs.String("cost-model", string(partition.CostPipeplan), "pipeplan (ours) or pipedream (the original optimizer's formulas)")
	exportPlan := fs.String("export-plan", "", "write the partition as a core/plan JSON run plan to this file")
	gpu := fs.String("gpu", "", "GPU id for the exported plan (default: the profile's device, else nvidia-v100-sxm2-16gb, PipeDream's)")
	batch := fs.Int("batch", 0, "2bw: global batch size B in samples (default: the profiled minibatch × GPUs)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("partition: unexpected argument %q", fs.Arg(0))
	}
	levels, err := parseLevels(*sizes, *bandwidths)
	if err != nil {
		return err
	}
	in, err := loadPartitionInput(*profile, *name)
	if err != nil {
		return err
	}
	if *gpu == "" {
		*gpu = defaultPlanGPU(in)
	}
	problem := partition.Problem{Profile: &in.linear, States: in.states,
		System:   partition.System{GPU: hw.GPU{ID: *gpu}, Levels: levels, MemoryBytes: *memory},
		Straight: *straight, CostModel: partition.CostModel(*costModel)}
	switch *algorithm {
	case plan.PlannerPipeDream:
	case plan.PlannerMadPipe:
		return runMadPipe(stdout, in, problem, *exportPlan, *asJSON)
	case plan.PlannerTwoBW:
		return runTwoBW(stdout, in, problem, twoBWFlags{batch: *batch, exportPlan: *exportPlan, asJSON: *asJSON})
	default:
		return fmt.Errorf("--algorithm: must be pipedream, madpipe or 2bw, got %q", *algorithm)
	}
	cands, err := planWith(plan.PlannerPipeDream, problem)
	if err != nil {
		return err
	}
	if *exportPlan != "" {
		if err := exportPipeDreamPlan(*exportPlan, in, cands[0]); err != nil {
			return err
		}
	}
	out := partitionOutput{Model: in.name, Algorithm: *algorithm, States: in.cuts.Len(), Levels: levels, PipeDreamResult: cands[0].PipeDream}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	return printPartition(stdout, out)
}

func profileNames() []string {
	var names []string
	for _, in := range modelprofiles.List() {
		names = append(names, in.Name)
	}
	return names
}

// parseLevels parses "--level-sizes 4,4 --level-bandwidths 16e9,1.25e9".
func parseLevels(sizes, bandwidths string) ([]hw.Level, error) {
	ss, bs := strings.Split(sizes, ","), strings.Split(bandwidths, ",")
	if len(ss) != len(bs) {
		return nil, fmt.Errorf("--level-bandwidths: need one bandwidth per level (%d), got %d", len(ss), len(bs))
	}
	levels := make([]hw.Level, len(ss))
	for i := range ss {
		n, err := strconv.Atoi(strings.TrimSpace(ss[i]))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--level-sizes[%d]: must be an integer >= 1, got %q", i, ss[i])
		}
		b, err := strconv.ParseFloat(strings.TrimSpace(bs[i]), 64)
		if err != nil || !(b > 0) || b > 1e18 {
			return nil, fmt.Errorf("--level-bandwidths[%d]: must be a positive number of bytes/s, got %q", i, bs[i])
		}
		levels[i] = hw.Level{Workers: n, BandwidthBytesPerSec: b}
	}
	return levels, nil
}

// loadPartitionInput reads --profile (JSON profile or graph.txt, by content)
// or the embedded --model.
func loadPartitionInput(path, name string) (*partitionInput, error) {
	switch {
	case path != "" && name != "":
		return nil, fmt.Errorf("partition: give --profile or --model, not both")
	case name != "":
		g, err := modelprofiles.Graph(name)
		if err != nil {
			return nil, err
		}
		return graphInput(g)
	case path == "":
		return nil, fmt.Errorf("partition: need --profile FILE or --model NAME (%s)", strings.Join(profileNames(), ", "))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		p, err := model.ParseProfile(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		cuts, err := partition.ChainCuts(*p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		n := p.Name
		if n == "" {
			n = path
		}
		return &partitionInput{name: n, cuts: cuts, linear: *p, microbatch: p.MicrobatchSize, device: p.Device}, nil
	}
	g, err := model.ParseGraph(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	g.Name = path
	return graphInput(g)
}

// graphInput builds the cuts of a PipeDream graph from its antichain states.
func graphInput(g *model.Graph) (*partitionInput, error) {
	st, err := g.States()
	if err != nil {
		return nil, err
	}
	cuts, err := partition.GraphCuts(st)
	if err != nil {
		return nil, err
	}
	return &partitionInput{name: g.Name, cuts: cuts, states: st, linear: g.Chain(), microbatch: g.MicrobatchSize}, nil
}

// printPartition prints the partition as a table.
func printPartition(w io.Writer, out partitionOutput) error {
	fmt.Fprintf(w, "model %s: %d states, %d GPUs, cost model %s\n", out.Model, out.States, out.GPUs, out.CostModel)
	fmt.Fprintf(w, "bottleneck %.6g s per minibatch (data parallel %.6g s, one GPU %.6g s), NOAM %d\n",
		out.BottleneckSeconds, out.DataParallelSeconds, out.SingleStageSeconds, out.NOAM)
	tw := newTable(w)
	fmt.Fprintln(tw, "STAGE\tLAYERS\tREPLICAS\tCOMPUTE s\tPARAMS MB\tIN FLIGHT\tMEMORY/GPU GB")
	for q, s := range out.Stages {
		fmt.Fprintf(tw, "%d\t%d-%d\t%d\t%.6g\t%.1f\t%d\t%.2f\n", q, s.FirstLayer, s.LastLayer, s.Replicas,
			s.ComputeSeconds, s.ParameterBytes/1e6, s.InFlight, s.MemoryBytes/1e9)
	}
	return tw.Flush()
}

// planWith runs the named planner on the problem.
func planWith(name string, problem partition.Problem) ([]partition.Candidate, error) {
	pl, err := partition.Lookup(name)
	if err != nil {
		return nil, err
	}
	return pl.Plan(context.Background(), problem, nil)
}

// exportPipeDreamPlan writes PipeDream's candidate as a core/plan run plan.
// A graph's states are not a chain of layers, so its plan has one layer
// per stage (the nodes between the stage's cuts).
func exportPipeDreamPlan(path string, in *partitionInput, c partition.Candidate) error {
	if in.microbatch < 1 {
		return fmt.Errorf("--export-plan: the profile does not say its minibatch size (a plan needs it); use a JSON profile or an embedded --model")
	}
	return exportPlanFile(path, c)
}

// exportPlanFile writes candidate c's run plan to path.
func exportPlanFile(path string, c partition.Candidate) error {
	p, err := c.RunPlan()
	if err != nil {
		return fmt.Errorf("--export-plan: %w", err)
	}
	data, err := p.Marshal()
	if err != nil {
		return fmt.Errorf("--export-plan: %w", err)
	}
	return atomicfile.WriteFile(path, data)
}

// defaultPlanGPU is the GPU an exported plan names when --gpu is not given:
// the profile's device, else PipeDream's V100.
func defaultPlanGPU(in *partitionInput) string {
	if in.device != "" {
		return in.device
	}
	return "nvidia-v100-sxm2-16gb"
}
