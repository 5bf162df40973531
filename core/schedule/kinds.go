package schedule

import (
	"fmt"
	"strings"
)

// Kind names a schedule kind: a generator with its traits. The strings are
// those of the CLI, of plan.Execution.Schedule and of the runner. Every kind
// is defined once, in the registry below; everything else asks it.
type Kind string

// The schedule kinds.
const (
	// GPipe runs all forward passes, then all backward passes, then flushes.
	GPipe Kind = "gpipe"
	// OneFOneB is 1F1B with a flush (PipeDream-Flush, dissertation §3.2.3).
	OneFOneB Kind = "1f1b"
	// Interleaved is Megatron's interleaved 1F1B with v chunks per device (§4.2.2).
	Interleaved Kind = "interleaved"
	// TwoBW is PipeDream-2BW: 1F1B without flushes, double-buffered weights (§3.2.1).
	TwoBW Kind = "2bw"
	// PipeDream is asynchronous 1F1B with weight stashing (§2.4.3).
	PipeDream Kind = "pipedream"
	// OneFOneBRR is 1F1B with replicated stages fed round-robin (§2.4.2).
	OneFOneBRR Kind = "1f1b-rr"
	// ZBH1 is the zero-bubble ZB-H1 schedule of Qi et al. (2023).
	ZBH1 Kind = "zb-h1"
	// ZBV is the zero-bubble V schedule of Qi et al. (2024): two model
	// chunks per device placed in a V, the backward split like ZB-H1's.
	ZBV Kind = "zb-v"
	// DualPipeV is DeepSeek's DualPipe cut in half (DualPipeV): ZB-V's V,
	// its steady state pairing one chunk's forward with the other's backward.
	DualPipeV Kind = "dualpipe-v"
	// OneFOneBStar is MadPipe's 1F1B* for a given period (madpipe-2020 §4.1).
	OneFOneBStar Kind = "1f1b-star"
)

// VChunks is the number of model chunks per device of a V-shaped kind
// (KindInfo.VShaped).
const VChunks = 2

// KindInfo is what the registry knows of one schedule kind.
type KindInfo struct {
	// Kind is the kind's name.
	Kind Kind
	// Description says in a few words what the schedule does.
	Description string
	// Source is the paper and section the schedule comes from.
	Source string
	// Versioning is the weight-version rule of its schedules (pipedream may
	// switch to VerticalSync with Options.VerticalSync).
	Versioning Versioning
	// Chunked reports whether it takes v > 1 model chunks per device.
	Chunked bool
	// MultiBatch reports whether it runs several batches without a flush
	// (its steady state spans batches; Options.Batches > 1 is allowed).
	MultiBatch bool
	// VShaped reports whether its devices each hold VChunks model chunks
	// placed in a V: device r runs stages r and 2p−1−r (ZBVStages), so the
	// last stage sits on the first device. Every other kind loops: chunk c
	// of device r is stage c·p + r.
	VShaped bool
	// SplitsBackward reports whether it runs each backward as an input
	// gradient (I) and a later weight gradient (W).
	SplitsBackward bool
	// WeightGradientFill reports whether its W's (SplitsBackward) fill the
	// flush's gaps in closed form: at equal stages of forward F, input gradient I and
	// weight gradient W a device idles (p−1)(F + I − min(W, F)) a step
	// instead of 1F1B's (p−1)(F + I + W) (ZB-H1; TestZBH1Bubble).
	WeightGradientFill bool
	// MinMicrobatchesPerDevice is the fewest microbatches per device it
	// runs (MinMicrobatches); 0 means one.
	MinMicrobatchesPerDevice int

	// generate makes its action lists.
	generate func(Options) (*Schedule, error)
	// inFlight is the closed-form stash depth and weight-version count of
	// stage i of p for m microbatches and v chunks (arguments checked by
	// Kind.InFlight); nil when there is none.
	inFlight func(p, i, m, v int) (activations, weightVersions int, err error)
	// bubble is the closed-form bubble over ideal compute time; nil when
	// there is none.
	bubble func(p, m, v int) float64
}

// Flushes reports whether the kind ends every step with a flush and one
// optimizer step (synchronous weight updates), so that its pipeline fills
// and drains once per step.
func (in KindInfo) Flushes() bool { return in.Versioning == Synchronous }

// Chunks returns the model chunks each device holds under the kind with
// an interleave of v: v for a chunked kind, VChunks for a V-shaped one,
// else 1.
func (in KindInfo) Chunks(v int) int {
	switch {
	case in.VShaped:
		return VChunks
	case in.Chunked:
		return v
	}
	return 1
}

// ChunkDevice returns the device, of p, that runs model chunk k (in model
// order, of the p·Chunks the kind lays out): k mod p where the chunks
// loop, and in a V k going down and 2p−1−k coming back up (ZBVStages'
// inverse).
func (in KindInfo) ChunkDevice(k, p int) int {
	if in.VShaped && k >= p {
		return 2*p - 1 - k
	}
	return k % p
}

// MinMicrobatches returns the fewest microbatches the kind runs on p
// devices: MinMicrobatchesPerDevice × p (dualpipe-v: one per stage, 2p,
// as torch's ScheduleDualPipeV requires), else 1.
func (in KindInfo) MinMicrobatches(p int) int { return max(1, in.MinMicrobatchesPerDevice*p) }

// Analytic reports whether the kind has closed forms for its in-flight
// count and bubble, so that the analytic cost model (core/cost) covers it.
func (in KindInfo) Analytic() bool { return in.inFlight != nil && in.bubble != nil }

// registry defines every schedule kind, in the stable order of Kinds.
var registry = []KindInfo{
	{Kind: GPipe, Description: "all forward passes, then all backward passes, then a flush",
		Source: "GPipe (Huang et al. 2019); dissertation §4.2.2", Versioning: Synchronous,
		generate: gpipe, inFlight: func(p, i, m, v int) (int, int, error) { return m, 1, nil }, bubble: flushBubble},
	{Kind: OneFOneB, Description: "one forward, one backward (1F1B) in the steady state, with a flush (PipeDream-Flush)",
		Source: "dissertation §3.2.2, §4.2.2", Versioning: Synchronous,
		generate: oneFOneBFlush, inFlight: oneFOneBInFlight, bubble: flushBubble},
	{Kind: Interleaved, Description: "Megatron-LM's interleaved 1F1B: v model chunks per device, a flush",
		Source: "dissertation §4.2.2", Versioning: Synchronous, Chunked: true,
		generate: interleaved, inFlight: interleavedInFlight, bubble: flushBubble},
	{Kind: TwoBW, Description: "PipeDream-2BW: 1F1B without flushes, two weight versions (double-buffered)",
		Source: "dissertation §3.2.1", Versioning: DoubleBuffered, MultiBatch: true,
		generate: twoBW, inFlight: twoBWInFlight, bubble: noBubble},
	{Kind: PipeDream, Description: "asynchronous 1F1B with weight stashing (or vertical sync), no flushes",
		Source: "dissertation §2.4.3", Versioning: Stashed, MultiBatch: true,
		generate: pipeDream, inFlight: func(p, i, m, v int) (int, int, error) { return p - i, p - i, nil }, bubble: noBubble},
	{Kind: OneFOneBRR, Description: "PipeDream's 1F1B with replicated stages fed round-robin (1F1B-RR)",
		Source: "dissertation §2.4.2", Versioning: Stashed, generate: oneFOneBRR},
	{Kind: ZBH1, Description: "zero-bubble ZB-H1: the backward split into input (I) and weight (W) gradients",
		Source: "Qi et al. 2023, Zero Bubble Pipeline Parallelism §2", Versioning: Synchronous, SplitsBackward: true, WeightGradientFill: true,
		generate: zbH1, inFlight: zbH1InFlight, bubble: zbH1Bubble},
	{Kind: ZBV, Description: "zero-bubble ZB-V: two chunks per device in a V (stages r and 2p−1−r), the backward split into I and W",
		Source:     "Qi et al. 2024, Pipeline Parallelism with Controllable Memory §4; torch.distributed.pipelining's ScheduleZBVZeroBubble",
		Versioning: Synchronous, VShaped: true, SplitsBackward: true, generate: zbV, inFlight: zbVInFlight, bubble: zbVBubble},
	{Kind: DualPipeV, Description: "DualPipeV: ZB-V's V, one chunk's forward paired with the other's backward (their communication overlapped where the engine does so)",
		Source:     "DeepSeek-V3 technical report §3.2.1 (DualPipe); deepseek-ai/DualPipe's DualPipeV; torch.distributed.pipelining's ScheduleDualPipeV",
		Versioning: Synchronous, VShaped: true, SplitsBackward: true, MinMicrobatchesPerDevice: VChunks,
		generate: dualPipeV, inFlight: dualPipeVInFlight, bubble: dualPipeVBubble},
	{Kind: OneFOneBStar, Description: "MadPipe's periodic 1F1B* for a target period, stages grouped",
		Source: "madpipe-2020 §4.1", Versioning: Synchronous, generate: oneFOneBStar},
}

// Kinds lists every schedule kind in a stable order.
var Kinds = kindsOf(registry)

// kindsOf lists the kinds of a registry.
func kindsOf(r []KindInfo) []Kind {
	ks := make([]Kind, len(r))
	for i, in := range r {
		ks[i] = in.Kind
	}
	return ks
}

// Registry returns a copy of every kind's entry, in the order of Kinds.
func Registry() []KindInfo {
	out := make([]KindInfo, len(registry))
	copy(out, registry)
	return out
}

// Info returns the registry's entry for k, or an error naming the kind and
// the known ones (without a field prefix: the caller names the field).
func (k Kind) Info() (KindInfo, error) {
	for i := range registry { // by index: the cost model asks once per pipeline stage
		if registry[i].Kind == k {
			return registry[i], nil
		}
	}
	return KindInfo{}, fmt.Errorf("must be one of %s, got %q", KindList(", "), k)
}

// KindList joins the names of every kind with sep, e.g. for flag help:
// KindList("|") is "gpipe|1f1b|...".
func KindList(sep string) string {
	names := make([]string, len(registry))
	for i, in := range registry {
		names[i] = string(in.Kind)
	}
	return strings.Join(names, sep)
}

// KindHelp describes every kind on its own line (no final newline),
// indented by indent: its name, description and source.
func KindHelp(indent string) string {
	lines := make([]string, len(registry))
	for i, in := range registry {
		lines[i] = fmt.Sprintf("%s%-12s %s [%s]", indent, in.Kind, in.Description, in.Source)
	}
	return strings.Join(lines, "\n")
}

// InFlight returns, for pipeline stage i (0-based) of p, how many
// microbatches' activations (per model chunk it holds, in units of one
// chunk's activations) the schedule keeps stashed at its peak, and how many
// weight versions it keeps, for m microbatches per step and v chunks per
// device:
//
//   - gpipe: all m microbatches, one version (dissertation §4.2.2).
//   - 1f1b (PipeDream-Flush): min(p−i, m), one version (§3.2.2, §4.2.2).
//   - interleaved: chunk activations min(2(p−i−1) + (v−1)p + 1, m·v),
//     Megatron-LM's warm-up depth plus the one in flight, which gives the
//     first stage L(1 + (p−1)/(pv)) layers (Korthikanti et al. 2022 §4.2.3);
//     one version; with v = 1 it is 1f1b.
//   - 2bw: p−i, two versions (§3.2.1); it needs m >= p.
//   - pipedream: p−i, one version per in-flight input, p−i (§2.3.2).
//   - zb-h1: min(p, m) microbatches on every device until their W, one
//     version (Qi et al. 2023 §2.1).
//   - zb-v: min(2p, 2m, m + i + 1) chunk activations over both of the
//     device's chunks, one version (Qi et al. 2024 §4).
//   - dualpipe-v: 2p + 1 chunk activations over both chunks, one version
//     (deepseek-ai/DualPipe's "PP+1" of 2p chunks); it needs m >= 2p.
//
// Neither count grows with i, but for V-shaped kinds, whose counts never
// shrink with i: a cost model may take the first (V-shaped: the last) of
// stages that are otherwise alike as the most loaded
// (TestInFlightNeverGrows). The other kinds have no closed form: InFlight returns an error naming them.
func (k Kind) InFlight(p, i, m, v int) (activations, weightVersions int, err error) {
	in, err := k.Info()
	if err != nil {
		return 0, 0, fmt.Errorf("schedule: %w", err)
	}
	if p < 1 || i < 0 || i >= p || m < 1 || v < 1 {
		return 0, 0, fmt.Errorf("schedule: need p >= 1, 0 <= i < p, m >= 1, v >= 1, got p=%d i=%d m=%d v=%d", p, i, m, v)
	}
	if v > 1 && !in.Chunked {
		return 0, 0, fmt.Errorf("schedule: interleave %d needs the interleaved schedule, got %q", v, k)
	}
	if in.inFlight == nil {
		return 0, 0, fmt.Errorf("schedule: %q has no closed-form in-flight count; the analytic model covers %s", k, namesWhere(KindInfo.Analytic))
	}
	if m < in.MinMicrobatches(p) {
		return 0, 0, fmt.Errorf("schedule: %s needs m >= %d microbatches on p=%d, got m=%d", k, in.MinMicrobatches(p), p, m)
	}
	return in.inFlight(p, i, m, v)
}

// Bubble returns the pipeline bubble of the kind, bubble time over ideal
// compute time, for p stages, m microbatches and v chunks per device:
// (p−1)/m for GPipe and 1F1B, and (1/v)·(p−1)/m interleaved (dissertation
// §4.2.2); 2BW and PipeDream do not flush: their steady state has no bubble.
// The other kinds have no closed form: Bubble returns an error naming them.
func (k Kind) Bubble(p, m, v int) (float64, error) {
	in, err := k.Info()
	if err != nil {
		return 0, fmt.Errorf("schedule: %w", err)
	}
	if in.bubble == nil {
		return 0, fmt.Errorf("schedule: %q has no closed-form bubble; the analytic model covers %s", k, namesWhere(KindInfo.Analytic))
	}
	if m < 1 || v < 1 {
		return 0, nil
	}
	return in.bubble(p, m, v), nil
}

// namesWhere names the kinds whose entry satisfies has, comma-separated.
func namesWhere(has func(KindInfo) bool) string {
	var names []string
	for _, in := range registry {
		if has(in) {
			names = append(names, string(in.Kind))
		}
	}
	return strings.Join(names, ", ")
}

// oneFOneBInFlight is 1F1B's stash: min(p−i, m), one version.
func oneFOneBInFlight(p, i, m, v int) (int, int, error) { return min(p-i, m), 1, nil }

// interleavedInFlight is Megatron-LM's warm-up depth plus the one in flight.
func interleavedInFlight(p, i, m, v int) (int, int, error) {
	if v == 1 {
		return oneFOneBInFlight(p, i, m, v)
	}
	return min(2*(p-i-1)+(v-1)*p+1, m*v), 1, nil
}

// twoBWInFlight is 2BW's stash: p−i, two versions; it needs m >= p.
func twoBWInFlight(p, i, m, v int) (int, int, error) {
	if m < p {
		return 0, 0, fmt.Errorf("schedule: 2bw needs m >= p so that two weight versions suffice (§3.2.1), got m=%d p=%d", m, p)
	}
	return p - i, 2, nil
}

// zbH1InFlight is ZB-H1's stash: every device holds min(p, m)
// microbatches until their W, 1F1B's first stage's peak (Qi et al. 2023
// §2.1), one version.
func zbH1InFlight(p, i, m, v int) (int, int, error) { return min(p, m), 1, nil }

// zbVInFlight is ZB-V's stash in chunk activations (both of a device's
// chunks together): min(2p, 2m, m + i + 1) — at most 2p, p microbatches
// of a whole stage as 1F1B's first stage and ZB-H1's every device (Qi et
// al. 2024 §4), reached by every device once m >= 2p − 1; with fewer
// microbatches device i holds m + i + 1, the last device, where the V
// turns, the most. One version.
func zbVInFlight(p, i, m, v int) (int, int, error) { return min(2*p, 2*m, m+i+1), 1, nil }

// zbVBubble is ZB-V's bubble at T_F = T_I = T_W per chunk: each device
// works 2m(T_F+T_I+T_W) and the step adds max(p−1, 4(p−1) − 2(m−1))
// chunk forwards, the p−1 before the last device starts once m >= 2p − 1
// (Qi et al. 2024 §4: zero bubble in the steady state) and a longer fill
// and drain with fewer microbatches. With other times the cost model
// simulates the schedule.
func zbVBubble(p, m, v int) float64 {
	return float64(max(p-1, 4*(p-1)-2*(m-1))) / float64(6*m)
}

// dualPipeVInFlight is DualPipeV's stash in chunk activations (both of a
// device's chunks together): 2p + 1 on every device, ZB-V's 2p and the
// one chunk more that its paired steady state holds (deepseek-ai/DualPipe's
// table: activations "PP+1" for PP = 2p chunks). One version; m >= 2p
// (MinMicrobatches, which Kind.InFlight checks).
func dualPipeVInFlight(p, i, m, v int) (int, int, error) { return 2*p + 1, 1, nil }

// dualPipeVBubble is DualPipeV's bubble at T_F = T_I = T_W per chunk:
// each device works 2m(T_F+T_I+T_W) and the step adds p−1 chunk forwards,
// as ZB-V's with m >= 2p (TestDualPipeV). DeepSeek's table gives
// (p−1)(T_F&B + T_B − 3T_W), 2(p−1) forwards here with the pair at
// T_F + T_B; torch's order, simulated, idles half that. With other times
// the cost model simulates the schedule.
func dualPipeVBubble(p, m, v int) float64 { return float64(p-1) / float64(6*m) }

// zbH1Bubble is ZB-H1's bubble at T_F = T_I = T_W, (p−1)/(3m): a third of
// 1F1B's (Qi et al. 2023 §2.1; with other times the cost model takes the
// idle (p−1)(F + I − min(W, F)), WeightGradientFill).
func zbH1Bubble(p, m, v int) float64 { return float64(p-1) / 3 / float64(m) }

// flushBubble is a flushing schedule's bubble (p−1)/(v·m) (§4.2.2).
func flushBubble(p, m, v int) float64 { return float64(p-1) / float64(v) / float64(m) }

// noBubble is the bubble of a schedule without flushes: none.
func noBubble(p, m, v int) float64 { return 0 }
