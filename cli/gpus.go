package cli

import (
	"fmt"
	"io"

	"pipeplan/app"
	"pipeplan/core/hw"
)

func init() {
	register("gpus", command{summary: "list the embedded GPU profiles (memory, bandwidth, peak FLOP/s, links)", run: runGPUs})
}

// runGPUs prints the embedded GPU profiles as a table, or as JSON with --json.
func runGPUs(args []string, stdout io.Writer) error {
	fs := newFlagSet("gpus")
	asJSON := fs.Bool("json", false, "print the profiles as JSON (SI units: bytes, bytes/s, FLOP/s)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("gpus: unexpected argument %q", fs.Arg(0))
	}
	gpus := app.GPUProfiles()
	if *asJSON {
		return writeJSON(stdout, gpus)
	}
	tw := newTable(stdout)
	fmt.Fprintln(tw, "ID\tMEMORY GiB\tMEM BW GB/s\tBF16 TFLOP/s\tFP16 TFLOP/s\tFP8 TFLOP/s\tPEER LINK GB/s\tHOST LINK GB/s")
	for _, g := range gpus {
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\n", g.ID, g.MemoryBytes/(1<<30),
			orUnknown(g.MemoryBandwidthBytesPerSec, 1e9), orUnknown(g.PeakFLOPS[hw.PrecisionBF16], 1e12),
			orUnknown(g.PeakFLOPS[hw.PrecisionFP16], 1e12), orUnknown(g.PeakFLOPS[hw.PrecisionFP8], 1e12),
			linkGBps(g.IntraNode), linkGBps(g.Host))
	}
	fmt.Fprintln(tw, "(dense peaks; link bandwidths per GPU and direction; - = unsupported or not sourced, see gpuprofiles/README.md)")
	return tw.Flush()
}

// orUnknown formats v/unit, or "-" when v is 0 (unknown).
func orUnknown(v, unit float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.4g", v/unit)
}

// linkGBps formats a link's per-direction bandwidth in GB/s, "-" when absent or unknown.
func linkGBps(l *hw.Link) string {
	if l == nil {
		return "-"
	}
	return orUnknown(l.BandwidthBytesPerSec, 1e9)
}
