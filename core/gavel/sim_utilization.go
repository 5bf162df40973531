package gavel

// UtilizationSample is the cluster's utilization over one interval of a
// simulation: busy GPU-time over available GPU-time.
type UtilizationSample struct {
	// StartSeconds and EndSeconds bound the interval (simulated time).
	StartSeconds float64 `json:"start_s"`
	EndSeconds   float64 `json:"end_s"`
	// Utilization is in [0, 1].
	Utilization float64 `json:"utilization"`
}

// roundUsage is one round's busy GPU-time, kept for the utilization series.
type roundUsage struct {
	start, end, busyGPUSeconds float64
}

// maxUtilizationSamples bounds the utilization series of a result.
const maxUtilizationSamples = 200

// utilizationSeries spreads each round's busy GPU-time evenly over the
// round and sums it into at most maxUtilizationSamples equal intervals from
// the first round's start to the last round's end; time without rounds
// counts as idle.
func utilizationSeries(rounds []roundUsage, workers int) []UtilizationSample {
	if len(rounds) == 0 || workers < 1 {
		return nil
	}
	from, to := rounds[0].start, rounds[len(rounds)-1].end
	if !(to > from) {
		return nil
	}
	n := min(maxUtilizationSamples, len(rounds))
	width := (to - from) / float64(n)
	busy := make([]float64, n)
	for _, r := range rounds {
		if !(r.end > r.start) {
			continue
		}
		rate := r.busyGPUSeconds / (r.end - r.start)
		first := min(int((r.start-from)/width), n-1)
		for i := first; i < n; i++ {
			lo, hi := from+float64(i)*width, from+float64(i+1)*width
			if i == n-1 {
				hi = to
			}
			if lo >= r.end {
				break
			}
			if overlap := min(hi, r.end) - max(lo, r.start); overlap > 0 {
				busy[i] += rate * overlap
			}
		}
	}
	out := make([]UtilizationSample, n)
	for i := range out {
		lo, hi := from+float64(i)*width, from+float64(i+1)*width
		if i == n-1 {
			hi = to
		}
		out[i] = UtilizationSample{StartSeconds: lo, EndSeconds: hi, Utilization: min(1, busy[i]/(float64(workers)*(hi-lo)))}
	}
	return out
}
