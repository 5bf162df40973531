package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"pipeplan/app"
	"pipeplan/internal/atomicfile"
)

func init() {
	register("schedule", command{
		summary: "simulate a pipeline schedule: step time, bubble, peak memory, timeline SVG",
		run:     runSchedule,
	})
}

// runSchedule generates a schedule of equal stages, simulates it and prints
// a per-device table, JSON (--json), an SVG timeline (--svg) or torch's CSV (--csv).
func runSchedule(args []string, stdout io.Writer) error {
	fs := newFlagSet("schedule")
	kind := fs.String("kind", "1f1b", "schedule `KIND`, one of:\n"+app.ScheduleKindHelp("  "))
	stages := fs.Int("stages", 4, "pipeline stages P")
	microbatches := fs.Int("microbatches", 8, "microbatches per batch M")
	chunks := fs.Int("chunks", 2, "model chunks per device V (interleaved only; zb-v and dualpipe-v always run two)")
	batches := fs.Int("batches", 1, "batches to run (2bw and pipedream, whose steady state spans batches)")
	replicas := fs.String("replicas", "", "replicas per stage for 1f1b-rr, comma-separated (e.g. 2,1,1,1)")
	vsync := fs.Bool("vsync", false, "vertical sync (pipedream)")
	period := fs.Float64("period", 0, "target period in seconds for 1f1b-star (default: one stage's fwd+bwd)")
	fwd := fs.Float64("fwd", 1, "forward seconds of one microbatch on one device's layers (interleaved chunks take 1/V, the two chunks of zb-v and dualpipe-v half)")
	bwd := fs.Float64("bwd", 2, "backward seconds (input and weight gradients) of one microbatch")
	wgrad := fs.Float64("wgrad", -1, "weight-gradient part of --bwd, run as W by zb-h1, zb-v and dualpipe-v (default: half of --bwd)")
	comm := fs.Float64("comm", 0, "seconds to move an activation or gradient between devices")
	actBytes := fs.Float64("activation-bytes", 0, "bytes stashed per in-flight microbatch and stage")
	weightBytes := fs.Float64("weight-bytes", 0, "bytes of one weight version of a stage")
	asJSON := fs.Bool("json", false, "print JSON")
	svgPath := fs.String("svg", "", "write the timeline as SVG to `FILE`")
	from := fs.Float64("from", 0, "with --svg: draw from this many seconds into the step (zoom)")
	to := fs.Float64("to", 0, "with --svg: draw up to this many seconds into the step (0: the end)")
	csvPath := fs.String("csv", "", "write the action lists in torch.distributed.pipelining's CSV form to `FILE`")
	grid := fs.Bool("grid", false, "also print the step × device grid of actions")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("schedule: unexpected argument %q", fs.Arg(0))
	}
	spec := app.ScheduleSpec{Kind: *kind, Stages: *stages, Microbatches: *microbatches, Chunks: *chunks, Batches: *batches,
		VerticalSync: *vsync, PeriodSeconds: *period, FwdSeconds: *fwd, BwdSeconds: *bwd, WgradSeconds: *wgrad,
		CommSeconds: *comm, ActivationBytes: *actBytes, WeightBytes: *weightBytes}
	if *replicas != "" {
		r, err := parseInts(*replicas)
		if err != nil {
			return fmt.Errorf("--replicas: %v", err)
		}
		spec.Replicas = r
	}
	run, err := app.SimulateSchedule(context.Background(), spec)
	if err != nil {
		return fmt.Errorf("schedule: %w", flagError(err, map[string]string{"chunks": "chunks", "period_seconds": "period"}))
	}
	if *svgPath != "" {
		if err := atomicfile.WriteFile(*svgPath, run.SVG(*from, *to)); err != nil {
			return err
		}
	}
	if *csvPath != "" {
		csv, err := run.TorchCSV()
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(*csvPath, csv); err != nil {
			return err
		}
	}
	if *asJSON {
		return writeJSON(stdout, run.Timeline.Report())
	}
	printSchedule(stdout, run)
	if *grid {
		fmt.Fprint(stdout, "\n"+run.Schedule.Grid())
	}
	return nil
}

// printSchedule prints the summary and the per-device table.
func printSchedule(w io.Writer, run *app.ScheduleRun) {
	tl := run.Timeline
	fmt.Fprintf(w, "%s: %d devices, %d stages", tl.Kind, len(tl.Devices), tl.Stages)
	if tl.Chunks > 1 {
		fmt.Fprintf(w, " (%d chunks per device)", tl.Chunks)
	}
	fmt.Fprintf(w, ", %d microbatches", tl.Microbatches)
	if tl.Batches > 1 {
		fmt.Fprintf(w, ", %d batches", tl.Batches)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "step %.6g s, bubble %.2f%% (idle device-time / devices × step)\n\n", tl.StepSeconds, 100*tl.BubbleFraction)
	tw := newTable(w)
	fmt.Fprintln(tw, "device\tbusy (s)\tidle (s)\tbubble\tpeak activations\tpeak weight versions\tpeak memory (bytes)")
	for d, st := range tl.Devices {
		fmt.Fprintf(tw, "%d\t%.6g\t%.6g\t%.2f%%\t%d\t%d\t%.6g\n", d, st.BusySeconds, st.IdleSeconds, 100*st.BubbleFraction,
			st.PeakActivations, st.PeakWeightVersions, st.PeakMemoryBytes)
	}
	tw.Flush()
}

// parseInts parses a comma-separated list of integers.
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("want comma-separated integers, got %q", s)
		}
		out = append(out, n)
	}
	return out, nil
}
