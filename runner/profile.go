package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/gpuprofiles"
	"pipeplan/internal/atomicfile"
	"pipeplan/modelprofiles"
)

// profileScript measures layers and GEMMs (runner profile); it imports
// the model from modelScript.
//
//go:embed profile.py
var profileScript []byte

// Limits of `runner profile`: a model at most as deep as the planner takes,
// GEMMs up to 32768² (bf16: 6 GiB for the three matrices).
const (
	maxProfileLayers     = 256
	maxProfileRepeats    = 100
	maxGEMMSize          = 32768
	maxGEMMSizes         = 32
	maxProfileMicrobatch = 1024
	maxProfileSeq        = 1 << 20
)

// Default GEMM sizes (n of n×n by n×n): a CPU core reaches its rate by a
// few hundred; a GPU needs thousands to fill its SMs.
var (
	cpuGEMMSizes  = []int{64, 128, 256, 512}
	cudaGEMMSizes = []int{256, 512, 1024, 2048, 4096, 8192, 16384}
)

// profileConfig is the profile script's input (profile.json).
type profileConfig struct {
	Device         string       `json:"device"`
	Model          *workerModel `json:"model"`
	MicrobatchSize int          `json:"microbatch_size"`
	Repeats        int          `json:"repeats"`
	Warmup         int          `json:"warmup"`
	Threads        int          `json:"threads"`
	GEMMSizes      []int        `json:"gemm_sizes"`
	Out            string       `json:"out"`
}

// gemmTiming is one timed n×n by n×n matmul.
type gemmTiming struct {
	N       int     `json:"n"`
	FLOPs   float64 `json:"flops"`
	Seconds float64 `json:"seconds"`
}

// profileOutput is what the profile script writes.
type profileOutput struct {
	TorchVersion string        `json:"torch_version"`
	DeviceName   string        `json:"device_name"`
	DType        string        `json:"dtype"`
	Layers       []model.Layer `json:"layers"`
	GEMMs        []gemmTiming  `json:"gemms"`
}

// profileOptions are `runner profile`'s parsed flags.
type profileOptions struct {
	preset, planPath, device, python, gpu string
	layers, seq, microbatch               int
	repeats, warmup, threads              int
	gemmSizes                             []int
	out, calibration                      string
	timeout                               time.Duration
}

// runProfile is `runner profile`: it measures the plan's (or a preset's)
// transformer layer by layer and the device's GEMMs, and writes a layer
// profile (model.Profile JSON) and a GEMM calibration (cost.Calibration).
func runProfile(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseProfileFlags(args, stderr)
	if err != nil {
		return err
	}
	tr, name, mb, err := profiledTransformer(o)
	if err != nil {
		return err
	}
	if o.microbatch > 0 {
		mb = o.microbatch
	}
	total := tr.Layers
	if o.layers > 0 {
		tr.Layers = o.layers
	}
	if o.seq > 0 {
		tr.Seq = o.seq
	}
	if tr.Seq > maxProfileSeq {
		return fmt.Errorf("--seq: the model's sequence length %d is over %d; give a shorter one", tr.Seq, maxProfileSeq)
	}
	m, err := transformerModel(workerModel{Layers: tr.Layers, Seed: 1}, &tr, 1, false)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, o.timeout, fmt.Errorf("--timeout %v elapsed", o.timeout))
	defer cancel()
	candidates := defaultPythons
	if o.python != "" {
		candidates = []string{o.python}
	}
	python, err := findPython(ctx, candidates, importsTorch)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "pipeplan-profile-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := profileConfig{Device: o.device, Model: &m, MicrobatchSize: mb, Repeats: o.repeats, Warmup: o.warmup,
		Threads: o.threads, GEMMSizes: o.gemmSizes, Out: filepath.Join(dir, "measured.json")}
	out, err := measure(ctx, python, dir, cfg)
	if err != nil {
		return err
	}
	gpu := o.gpu
	if gpu == "" && o.device == "cuda" {
		gpu = matchGPU(out.DeviceName)
	}
	prof, cal, err := profileFiles(out, cfg, gpu, fmt.Sprintf("%s, %d of %d layers, seq %d", name, tr.Layers, total, tr.Seq))
	if err != nil {
		return err
	}
	for _, f := range []struct {
		path string
		v    any
	}{{o.out, prof}, {o.calibration, cal}} {
		if f.path == "" {
			continue
		}
		data, err := json.MarshalIndent(f.v, "", "  ")
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(f.path, append(data, '\n')); err != nil {
			return err
		}
	}
	return writeProfileTable(stdout, prof, cal, out.GEMMs)
}

// parseProfileFlags reads and checks `runner profile`'s flags.
func parseProfileFlags(args []string, stderr io.Writer) (profileOptions, error) {
	fs := flag.NewFlagSet("runner profile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./runner profile [flags] (--model PRESET | plan.json)")
		fs.PrintDefaults()
	}
	var o profileOptions
	var sizes string
	fs.StringVar(&o.preset, "model", "", "an LLM preset (e.g. llama3-8b) instead of a plan file")
	fs.IntVar(&o.layers, "layers", 0, "profile only the first N decoder blocks (0: all of them)")
	fs.IntVar(&o.seq, "seq", 0, "sequence length (0: the model's)")
	fs.IntVar(&o.microbatch, "microbatch-size", 0, "samples per microbatch (0: the plan's, or 1 for a preset)")
	fs.StringVar(&o.device, "device", "cpu", "cpu (fp32, --threads threads) or cuda (device 0, bf16 autocast and bf16 GEMMs)")
	fs.StringVar(&o.python, "python", "", "python interpreter with torch (default: as the runner finds it)")
	fs.StringVar(&o.gpu, "gpu", "", "gpuprofiles id of the device, for the profile's device and the calibration (default: matched from torch's CUDA device name; none on CPU)")
	fs.IntVar(&o.repeats, "repeats", 5, "timed runs of each layer and GEMM (the median layer time is kept)")
	fs.IntVar(&o.warmup, "warmup", 2, "untimed runs before them")
	fs.IntVar(&o.threads, "threads", 1, "with --device cpu, torch's threads")
	fs.StringVar(&sizes, "gemm-sizes", "", "comma-separated n of the n×n GEMMs (default: "+joinInts(cpuGEMMSizes)+" on CPU, "+joinInts(cudaGEMMSizes)+" on CUDA)")
	fs.StringVar(&o.out, "out", "", "write the layer profile here (the JSON `pipeplan partition --profile` and the playground's upload read)")
	fs.StringVar(&o.calibration, "calibration", "", "write the GEMM calibration here (the JSON `pipeplan transformer --calibration` reads)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "stop the measurement after this long")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 1:
		return o, fmt.Errorf("profile: want at most one plan file, got %d arguments", fs.NArg())
	case (fs.NArg() == 1) == (o.preset != ""):
		fs.Usage()
		return o, fmt.Errorf("profile: give a plan file or --model, exactly one")
	case o.out == "" && o.calibration == "":
		return o, fmt.Errorf("profile: give --out (layer profile) or --calibration (GEMM efficiency), or both")
	case o.device != "cpu" && o.device != "cuda":
		return o, fmt.Errorf("--device: must be cpu or cuda, got %q", o.device)
	case o.layers < 0 || o.layers > maxProfileLayers:
		return o, fmt.Errorf("--layers: must be in [0, %d], got %d", maxProfileLayers, o.layers)
	case o.seq < 0 || o.seq > maxProfileSeq:
		return o, fmt.Errorf("--seq: must be in [0, %d], got %d", maxProfileSeq, o.seq)
	case o.microbatch < 0 || o.microbatch > maxProfileMicrobatch:
		return o, fmt.Errorf("--microbatch-size: must be in [0, %d], got %d", maxProfileMicrobatch, o.microbatch)
	case o.repeats < 1 || o.repeats > maxProfileRepeats:
		return o, fmt.Errorf("--repeats: must be in [1, %d], got %d", maxProfileRepeats, o.repeats)
	case o.warmup < 0 || o.warmup > maxProfileRepeats:
		return o, fmt.Errorf("--warmup: must be in [0, %d], got %d", maxProfileRepeats, o.warmup)
	case o.threads < 1 || o.threads > 1024:
		return o, fmt.Errorf("--threads: must be in [1, 1024], got %d", o.threads)
	case o.timeout <= 0:
		return o, fmt.Errorf("--timeout: must be positive, got %v", o.timeout)
	}
	if o.gpu != "" {
		if _, err := gpuprofiles.ByID(o.gpu); err != nil {
			return o, fmt.Errorf("--gpu: %w", err)
		}
	}
	o.planPath = fs.Arg(0)
	var err error
	if o.gemmSizes, err = parseGEMMSizes(sizes, o.device); err != nil {
		return o, err
	}
	return o, nil
}

// parseGEMMSizes reads --gemm-sizes: increasing sizes in [1, maxGEMMSize].
func parseGEMMSizes(s, device string) ([]int, error) {
	if s == "" {
		if device == "cuda" {
			return cudaGEMMSizes, nil
		}
		return cpuGEMMSizes, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > maxGEMMSize || (len(out) > 0 && n <= out[len(out)-1]) {
			return nil, fmt.Errorf("--gemm-sizes: want increasing sizes in [1, %d], got %q", maxGEMMSize, f)
		}
		out = append(out, n)
	}
	if len(out) > maxGEMMSizes {
		return nil, fmt.Errorf("--gemm-sizes: at most %d sizes, got %d", maxGEMMSizes, len(out))
	}
	return out, nil
}

// profiledTransformer is the model to profile, with its name and default
// microbatch size: the plan's transformer and microbatch size, or the
// preset with 1.
func profiledTransformer(o profileOptions) (model.Transformer, string, int, error) {
	if o.preset != "" {
		tr, in, err := modelprofiles.Transformer(o.preset)
		if err != nil {
			return tr, "", 0, fmt.Errorf("--model: %w", err)
		}
		return tr, in.Name, 1, nil
	}
	data, err := os.ReadFile(o.planPath)
	if err != nil {
		return model.Transformer{}, "", 0, err
	}
	p, err := plan.Parse(data)
	if err != nil {
		return model.Transformer{}, "", 0, err
	}
	if p.Model.Transformer == nil {
		return model.Transformer{}, "", 0, fmt.Errorf("model.transformer: the plan's model is a layer profile, already measured; profile a transformer plan or a --model preset")
	}
	return *p.Model.Transformer, modelName(p), p.Execution.MicrobatchSize, nil
}

// measure writes the scripts and the config into dir and runs the profile.
func measure(ctx context.Context, python, dir string, cfg profileConfig) (*profileOutput, error) {
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, err
	}
	for name, b := range map[string][]byte{"worker.py": workerScript, "model.py": modelScript, "profile.py": profileScript, "profile.json": data} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return nil, err
		}
	}
	cmd := exec.CommandContext(ctx, python, "profile.py", "--config", "profile.json")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("profile stopped: %v", context.Cause(ctx))
		}
		return nil, fmt.Errorf("profile.py: %w\n%s", err, keepLastBytes(out.Bytes(), 4000))
	}
	res, err := os.ReadFile(cfg.Out)
	if err != nil {
		return nil, fmt.Errorf("profile.py wrote no result: %w", err)
	}
	return parseProfileOutput(res, cfg)
}

// parseProfileOutput decodes and checks the profile script's result: the
// embedding, every block and the head, and every GEMM's repeats.
func parseProfileOutput(data []byte, cfg profileConfig) (*profileOutput, error) {
	if len(data) > maxResultBytes {
		return nil, fmt.Errorf("profile result: %d bytes is over the %d-byte limit", len(data), maxResultBytes)
	}
	var out profileOutput
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("profile result: %w", err)
	}
	if want := cfg.Model.Layers + 2; len(out.Layers) != want {
		return nil, fmt.Errorf("profile result.layers: want %d (embedding, %d blocks, head), got %d", want, cfg.Model.Layers, len(out.Layers))
	}
	if want := len(cfg.GEMMSizes) * cfg.Repeats; len(out.GEMMs) != want {
		return nil, fmt.Errorf("profile result.gemms: want %d (%d sizes × %d repeats), got %d", want, len(cfg.GEMMSizes), cfg.Repeats, len(out.GEMMs))
	}
	for i, g := range out.GEMMs {
		if n := cfg.GEMMSizes[i/cfg.Repeats]; g.N != n || g.FLOPs != 2*float64(n)*float64(n)*float64(n) {
			return nil, fmt.Errorf("profile result.gemms[%d]: want n %d with %g FLOPs, got n %d with %g", i, n, 2*float64(n)*float64(n)*float64(n), g.N, g.FLOPs)
		}
	}
	return &out, nil
}

// profileFiles turns the measurements into the layer profile and the
// calibration, each checked by its own parser's rules.
func profileFiles(out *profileOutput, cfg profileConfig, gpu, name string) (*model.Profile, *cost.Calibration, error) {
	dev := out.DeviceName
	prof := &model.Profile{Name: fmt.Sprintf("%s, measured on %s (torch %s, %s)", name, dev, out.TorchVersion, out.DType),
		MicrobatchSize: cfg.MicrobatchSize, Device: gpu, Layers: out.Layers}
	if err := prof.Validate(); err != nil {
		return nil, nil, fmt.Errorf("measured %w", err)
	}
	cal := &cost.Calibration{GPU: gpu, Device: dev, Precision: hw.PrecisionFP32,
		Source: fmt.Sprintf("runner profile: n×n by n×n matmuls (n = %s), %d timed runs each after %d untimed, torch %s", joinInts(cfg.GEMMSizes), cfg.Repeats, cfg.Warmup, out.TorchVersion)}
	if cfg.Device == "cuda" {
		cal.Precision = hw.PrecisionBF16
	}
	for _, g := range out.GEMMs {
		cal.Measurements = append(cal.Measurements, cost.Measurement{FLOPs: g.FLOPs, Seconds: g.Seconds})
	}
	data, err := json.Marshal(cal)
	if err != nil {
		return nil, nil, err
	}
	if _, err := cost.ParseCalibration(data); err != nil {
		return nil, nil, fmt.Errorf("measured %w", err)
	}
	return prof, cal, nil
}

// matchGPU is the gpuprofiles id of torch's CUDA device name, or "" when
// none or several match.
func matchGPU(name string) string {
	var ids []string
	for _, g := range gpuprofiles.All() {
		if sameGPU(g.ID, name) {
			ids = append(ids, g.ID)
		}
	}
	if len(ids) != 1 {
		return ""
	}
	return ids[0]
}

// writeProfileTable prints the layers and the GEMM rates; for a known GPU
// also the efficiency the default curve predicts at each size.
func writeProfileTable(w io.Writer, prof *model.Profile, cal *cost.Calibration, gemms []gemmTiming) error {
	fmt.Fprintf(w, "%s, microbatch %d\n", prof.Name, prof.MicrobatchSize)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "layer\tforward ms\tbackward ms\toutput activation MiB\tparameters MiB")
	for _, l := range prof.Layers {
		fmt.Fprintf(tw, "%s\t%.4g\t%.4g\t%.4g\t%.4g\n", l.Name, 1e3*l.FwdSeconds, 1e3*l.BwdSeconds, l.OutputActivationBytes/(1<<20), l.ParameterBytes/(1<<20))
	}
	fmt.Fprintln(tw)
	var peak float64
	var curve cost.EfficiencyCurve
	if g, err := gpuprofiles.ByID(cal.GPU); err == nil {
		if peak, err = g.Peak(cal.Precision); err == nil {
			curve, err = cost.DefaultEfficiency(g, cal.Precision)
			if err != nil {
				peak = 0
			}
		}
	}
	fmt.Fprintf(tw, "GEMM n (%s)\tmedian TFLOP/s\tof peak\tdefault curve\n", cal.Precision)
	for i := 0; i < len(gemms); {
		j := i
		var secs []float64
		for ; j < len(gemms) && gemms[j].N == gemms[i].N; j++ {
			secs = append(secs, gemms[j].Seconds)
		}
		rate := gemms[i].FLOPs / summarize(secs).Median
		ofPeak, predicted := "-", "-"
		if peak > 0 {
			ofPeak = fmt.Sprintf("%.1f%%", 100*rate/peak)
			predicted = fmt.Sprintf("%.1f%%", 100*curve.At(gemms[i].FLOPs))
		}
		fmt.Fprintf(tw, "%d\t%.4g\t%s\t%s\n", gemms[i].N, rate/1e12, ofPeak, predicted)
		i = j
	}
	return tw.Flush()
}

// joinInts writes ints comma-separated.
func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
