package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"

	"pipeplan/core/plan"
)

// Report is the runner's output: measured against predicted.
type Report struct {
	Model    string `json:"model"`
	Schedule string `json:"schedule"`
	Device   string `json:"device"`
	// Ranks is the run's ranks, on every node; PerRank holds this node's.
	Ranks int `json:"ranks"`
	// Nodes and NodeRank place this report's node in a multi-node run
	// (Nodes 0 on one node).
	Nodes    int `json:"nodes,omitempty"`
	NodeRank int `json:"node_rank,omitempty"`
	Stages   int `json:"stages"`
	Replicas int `json:"replicas"`
	// Steps is the number of measured steps (after warmup).
	Steps int `json:"steps"`
	// SamplesPerStep is replicas × microbatches × microbatch size of the run.
	SamplesPerStep int `json:"samples_per_step"`
	// Comparable is true only for a full-size run of the plan's schedule on
	// the plan's GPU model and count (compareDevice); otherwise the ratios
	// are 0 and Note says what the report compares and what not.
	Comparable bool   `json:"comparable"`
	Note       string `json:"note,omitempty"`
	// IterationSeconds is the step time, each step's slowest rank.
	IterationSeconds Stats   `json:"iteration_seconds"`
	SamplesPerSecond float64 `json:"samples_per_second"`
	// Predicted* are the plan's predictions; *Ratio is measured / predicted (0 when not predicted).
	PredictedIterationSeconds float64 `json:"predicted_iteration_seconds"`
	IterationRatio            float64 `json:"iteration_ratio"`
	PredictedSamplesPerSecond float64 `json:"predicted_samples_per_second"`
	ThroughputRatio           float64 `json:"throughput_ratio"`
	// Losses is each step's loss, averaged over replicas (warmup included).
	Losses []float64 `json:"losses"`
	// ReferenceLosses are the unpipelined run's losses (--check only).
	ReferenceLosses []float64 `json:"reference_losses,omitempty"`
	// MaxLossRelDiff is max |loss − reference| / |reference| (--check only).
	MaxLossRelDiff *float64     `json:"max_loss_rel_diff,omitempty"`
	PerRank        []RankReport `json:"per_rank"`
	// PerStage is each virtual stage's measured F, B (or I) and W times per
	// microbatch against the plan's (from the workers' action records).
	PerStage []StageReport `json:"per_stage,omitempty"`
	// PredictedStageTimesFrom says where the predicted per-stage times come from.
	PredictedStageTimesFrom string `json:"predicted_stage_times_from,omitempty"`
	// BubbleFraction is the measured idle share of the step (median over
	// the recorded steps); PredictedBubbleFraction is the plan's.
	BubbleFraction          *float64 `json:"bubble_fraction,omitempty"`
	PredictedBubbleFraction float64  `json:"predicted_bubble_fraction"`
	// PerStageNote says why per-stage fields are missing, when they are.
	PerStageNote string `json:"per_stage_note,omitempty"`
	// TimelineSVG is where the predicted and measured timelines were drawn.
	TimelineSVG string `json:"timeline_svg,omitempty"`
	// lossReplicas is how many replicas' losses Losses averages.
	lossReplicas int
}

// placeNode records, for one node of a multi-node run, which node the
// report is of and what it covers: this node's ranks, its slowest rank's
// step time, and the losses only where the last stages ran.
func (r *Report) placeNode(n nodeSpec, ranks int) {
	if n.nnodes <= 1 {
		return
	}
	r.Nodes, r.NodeRank, r.Ranks = n.nnodes, n.nodeRank, ranks
	note := fmt.Sprintf("node %d of %d: per_rank and the iteration time are this node's %d ranks", n.nodeRank, n.nnodes, len(r.PerRank))
	switch {
	case r.lossReplicas == 0:
		note += "; the losses (and --check) are reported by the node(s) running the last stage"
	case r.lossReplicas < r.Replicas:
		note += fmt.Sprintf("; the losses average the %d of %d replicas whose last stage ran here (no --check against the reference)", r.lossReplicas, r.Replicas)
	}
	r.addNote(note)
}

// hasAllLosses reports whether every replica's losses are in the report,
// as --check's comparison with the reference needs.
func (r *Report) hasAllLosses(c *runConfig) bool { return r.lossReplicas == c.Replicas }

// addNote appends a sentence to the report's note.
func (r *Report) addNote(s string) {
	if r.Note != "" {
		s = r.Note + "; " + s
	}
	r.Note = s
}

// Stats summarizes a sample.
type Stats struct {
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
}

// RankReport is one rank's measured peak memory against the prediction.
type RankReport struct {
	Rank                int     `json:"rank"`
	Stage               int     `json:"stage"`
	Replica             int     `json:"replica"`
	TPRank              int     `json:"tp_rank"`
	MedianStepSeconds   float64 `json:"median_step_seconds"`
	PeakMemoryBytes     float64 `json:"peak_memory_bytes"`
	PredictedPeakBytes  float64 `json:"predicted_peak_bytes"`
	MemoryRatio         float64 `json:"memory_ratio"`
	MemoryMeasuredAsRSS bool    `json:"memory_measured_as_rss"`
}

// newReport combines the ranks' results (ordered by rank) into the report.
func newReport(p *plan.Plan, c *runConfig, results []*rankResult) *Report {
	r := &Report{
		Model: modelName(p), Schedule: c.Schedule, Device: c.Device, Ranks: len(results),
		Stages: c.Stages, Replicas: c.Replicas, Steps: c.Steps,
		SamplesPerStep: c.Replicas * c.Microbatches * c.MicrobatchSize, Comparable: c.Comparable,
		PredictedIterationSeconds: p.Predictions.IterationSeconds,
		PredictedSamplesPerSecond: p.Predictions.SamplesPerSecond,
		PredictedBubbleFraction:   p.Predictions.BubbleFraction,
	}
	switch {
	case c.ScaledDown:
		r.Note = "--scale-down: a functional run of a smaller model; its timing and memory are not comparable to the plan's predictions"
		for _, d := range []struct {
			name      string
			plan, run int
		}{{"tp", p.Execution.TP, c.TP}, {"cp", p.Execution.CP, c.CP}, {"ep", p.Execution.EP, c.EP}} {
			if d.run != d.plan {
				r.Note += fmt.Sprintf("; %s %d ran as %s %d", d.name, d.plan, d.name, d.run)
			}
		}
	case !c.Comparable:
		r.Note = fmt.Sprintf("--schedule %s: the plan was predicted for %s; timing and memory are not comparable", c.Schedule, p.Execution.Schedule)
	}
	steps := make([]float64, c.Steps)
	lossRanks := 0
	for _, res := range results {
		for i, s := range res.StepSeconds {
			steps[i] = max(steps[i], s)
		}
		pred := p.Predictions.PeakBytesPerGPU
		if res.Stage < len(p.Predictions.StagePeakBytes) {
			pred = p.Predictions.StagePeakBytes[res.Stage]
		}
		r.PerRank = append(r.PerRank, RankReport{
			Rank: res.Rank, Stage: res.Stage, Replica: res.Replica, TPRank: res.TPRank,
			MedianStepSeconds: summarize(res.StepSeconds).Median,
			PeakMemoryBytes:   res.PeakMemoryBytes, PredictedPeakBytes: pred,
			MemoryMeasuredAsRSS: c.Device == "cpu",
		})
		if len(res.Losses) > 0 {
			if r.Losses == nil {
				r.Losses = make([]float64, len(res.Losses))
			}
			lossRanks++
			for i, l := range res.Losses {
				r.Losses[i] += l
			}
		}
	}
	for i := range r.Losses {
		r.Losses[i] /= float64(lossRanks) // the replicas' mean
	}
	r.lossReplicas = lossRanks
	r.IterationSeconds = summarize(steps)
	if r.IterationSeconds.Median > 0 {
		r.SamplesPerSecond = float64(r.SamplesPerStep) / r.IterationSeconds.Median
	}
	if c.Comparable {
		r.IterationRatio = ratio(r.IterationSeconds.Median, r.PredictedIterationSeconds)
		r.ThroughputRatio = ratio(r.SamplesPerSecond, r.PredictedSamplesPerSecond)
		for i := range r.PerRank {
			k := &r.PerRank[i]
			k.MemoryRatio = ratio(k.PeakMemoryBytes, k.PredictedPeakBytes)
		}
	}
	return r
}

// modelName names the plan's model for the report.
func modelName(p *plan.Plan) string {
	switch {
	case p.Model.Name != "":
		return p.Model.Name
	case p.Model.Transformer != nil && p.Model.Transformer.Name != "":
		return p.Model.Transformer.Name
	case p.Model.Profile != nil && p.Model.Profile.Name != "":
		return p.Model.Profile.Name
	}
	return "(unnamed)"
}

// checkReference records the reference losses and their largest relative difference.
func (r *Report) checkReference(ref []float64) error {
	if len(ref) != len(r.Losses) {
		return fmt.Errorf("reference: want %d losses, got %d", len(r.Losses), len(ref))
	}
	diff := 0.0
	for i, l := range r.Losses {
		if !(ref[i] > 0) || math.IsInf(ref[i], 0) {
			return fmt.Errorf("reference.losses[%d]: must be a finite number > 0, got %v", i, ref[i])
		}
		// A tiny reference can overflow the quotient; the largest float
		// keeps the report encodable as JSON.
		diff = max(diff, min(math.Abs(l-ref[i])/ref[i], math.MaxFloat64))
	}
	r.ReferenceLosses, r.MaxLossRelDiff = ref, &diff
	return nil
}

// summarize returns the median (mean of the middle two for even n) and the
// nearest-rank 90th percentile; zero for an empty sample.
func summarize(xs []float64) Stats {
	n := len(xs)
	if n == 0 {
		return Stats{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Stats{Median: med, P90: s[int(math.Ceil(0.9*float64(n)))-1]}
}

// ratio is measured/predicted, or 0 when nothing was predicted.
func ratio(measured, predicted float64) float64 {
	if predicted <= 0 {
		return 0
	}
	return measured / predicted
}

// writeTable prints the report as aligned text.
func (r *Report) writeTable(w io.Writer) error {
	fmt.Fprintf(w, "model %s, schedule %s, %d stages × %d replicas = %d ranks on %s, %d measured steps\n",
		r.Model, r.Schedule, r.Stages, r.Replicas, r.Ranks, r.Device, r.Steps)
	if r.Note != "" {
		fmt.Fprintf(w, "NOTE: %s\n", r.Note)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tmeasured\tpredicted\tmeasured/predicted")
	fmt.Fprintf(tw, "iteration s (median)\t%.4g\t%s\t%s\n", r.IterationSeconds.Median, orDash(r.PredictedIterationSeconds), orDash(r.IterationRatio))
	fmt.Fprintf(tw, "iteration s (p90)\t%.4g\t\t\n", r.IterationSeconds.P90)
	fmt.Fprintf(tw, "samples/s\t%.4g\t%s\t%s\n", r.SamplesPerSecond, orDash(r.PredictedSamplesPerSecond), orDash(r.ThroughputRatio))
	if n := len(r.Losses); n > 0 {
		fmt.Fprintf(tw, "loss (first → last step)\t%.6g → %.6g\t\t\n", r.Losses[0], r.Losses[n-1])
	}
	if r.MaxLossRelDiff != nil {
		fmt.Fprintf(tw, "loss vs unpipelined reference\tmax rel. diff %.2g\t\t\n", *r.MaxLossRelDiff)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "rank\tstage\treplica\tmedian step s\tpeak memory GiB\tpredicted GiB\tmeasured/predicted")
	for _, k := range r.PerRank {
		mem := fmt.Sprintf("%.3f", k.PeakMemoryBytes/(1<<30))
		if k.MemoryMeasuredAsRSS {
			mem += " (RSS)"
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.4g\t%s\t%s\t%s\n", k.Rank, k.Stage, k.Replica, k.MedianStepSeconds,
			mem, orDash(k.PredictedPeakBytes/(1<<30)), orDash(k.MemoryRatio))
	}
	r.writeStages(tw)
	return tw.Flush()
}

// writeStages prints the per-stage times and the bubble, measured against
// predicted, or why there are none.
func (r *Report) writeStages(tw io.Writer) {
	fmt.Fprintln(tw)
	if r.PerStageNote != "" {
		fmt.Fprintf(tw, "per stage: NOTE: %s\n", r.PerStageNote)
	}
	if len(r.PerStage) > 0 {
		fmt.Fprintln(tw, "stage (position, chunk)\tF ms\tpredicted\tB or I ms\tpredicted\tW ms\tpredicted")
		ms := func(v float64) string { return orDash(1e3 * v) }
		for _, s := range r.PerStage {
			fmt.Fprintf(tw, "%d (%d, %d)\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Stage, s.Position, s.Chunk,
				ms(s.ForwardSeconds), ms(s.PredictedForwardSeconds), ms(s.BackwardSeconds), ms(s.PredictedBackwardSeconds),
				ms(s.WeightSeconds), ms(s.PredictedWeightSeconds))
		}
	}
	measured := "-"
	if r.BubbleFraction != nil {
		measured = fmt.Sprintf("%.1f%%", 100*(*r.BubbleFraction))
	}
	fmt.Fprintf(tw, "bubble (idle share of the step)\t%s\tpredicted %.1f%%\n", measured, 100*r.PredictedBubbleFraction)
	if r.PredictedStageTimesFrom != "" {
		fmt.Fprintf(tw, "predicted stage times: %s\n", r.PredictedStageTimesFrom)
	}
	if r.TimelineSVG != "" {
		fmt.Fprintf(tw, "timelines (predicted above measured): %s\n", r.TimelineSVG)
	}
}

// orDash formats v, or "-" when it is zero (not predicted).
func orDash(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.4g", v)
}
