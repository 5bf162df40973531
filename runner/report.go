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
	Ranks    int    `json:"ranks"`
	Stages   int    `json:"stages"`
	Replicas int    `json:"replicas"`
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
			for i, l := range res.Losses {
				r.Losses[i] += l / float64(c.Replicas)
			}
		}
	}
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
	return tw.Flush()
}

// orDash formats v, or "-" when it is zero (not predicted).
func orDash(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.4g", v)
}
