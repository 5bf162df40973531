package gavel

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseTrace reads a Gavel trace file, one job per line with tab-separated
// fields, in either format (detected per line by its field count):
//
//	current (10): job_type command working_dir num_steps_arg needs_data_dir total_steps scale_factor priority_weight SLO arrival_time
//	legacy  (7):  job_type command num_steps_arg needs_data_dir total_steps arrival_time scale_factor
//
// Legacy rows with scale factor 0 are skipped, as Gavel's parser did. A
// negative SLO means none; a positive one is taken as seconds after arrival.
// Jobs get IDs 0, 1, ... in file order. Job types are not checked here: the
// simulator checks them against its throughput table.
func ParseTrace(data []byte) ([]Job, error) {
	var jobs []Job
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, "\t")
		var (
			j    Job
			skip bool
			err  error
		)
		switch len(f) {
		case 10:
			j, err = parseCurrentTraceLine(f)
		case 7:
			j, skip, err = parseLegacyTraceLine(f)
		default:
			err = fmt.Errorf("want 10 (current) or 7 (legacy) tab-separated fields, got %d", len(f))
		}
		if err != nil {
			return nil, fmt.Errorf("trace line %d: %w", i+1, err)
		}
		if skip {
			continue
		}
		j.ID = len(jobs)
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// parseCurrentTraceLine parses the 10-field format of Gavel's utils.parse_trace.
func parseCurrentTraceLine(f []string) (Job, error) {
	j := Job{JobType: f[0]}
	var err error
	if j.JobType == "" {
		return j, fmt.Errorf("job_type: must not be empty")
	}
	if j.NumSteps, err = traceInt("total_steps", f[5], 1); err != nil {
		return j, err
	}
	sf, err := traceInt("scale_factor", f[6], 1)
	if err != nil {
		return j, err
	}
	j.ScaleFactor = int(sf)
	if j.PriorityWeight, err = traceFloat("priority_weight", f[7]); err != nil {
		return j, err
	}
	if j.PriorityWeight <= 0 {
		return j, fmt.Errorf("priority_weight: must be > 0, got %v", j.PriorityWeight)
	}
	slo, err := traceFloat("SLO", f[8])
	if err != nil {
		return j, err
	}
	if slo > 0 {
		j.SLOSeconds = slo
	}
	if j.ArrivalSeconds, err = traceArrival(f[9]); err != nil {
		return j, err
	}
	return j, nil
}

// parseLegacyTraceLine parses the 7-field MSR/Philly format (Gavel commit
// 6fb30f9); skip reports a row with scale factor 0.
func parseLegacyTraceLine(f []string) (j Job, skip bool, err error) {
	j = Job{JobType: f[0], PriorityWeight: 1}
	if j.JobType == "" {
		return j, false, fmt.Errorf("job_type: must not be empty")
	}
	sf, err := traceInt("scale_factor", f[6], 0)
	if err != nil {
		return j, false, err
	}
	if sf == 0 {
		return j, true, nil
	}
	j.ScaleFactor = int(sf)
	if j.NumSteps, err = traceInt("total_steps", f[4], 1); err != nil {
		return j, false, err
	}
	if j.ArrivalSeconds, err = traceArrival(f[5]); err != nil {
		return j, false, err
	}
	return j, false, nil
}

// traceInt parses an integer field that must be >= min (at most 2^31-1).
func traceInt(field, s string, min int64) (float64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%s: not an integer: %q", field, s)
	}
	if v < min {
		return 0, fmt.Errorf("%s: must be >= %d, got %d", field, min, v)
	}
	return float64(v), nil
}

// traceFloat parses a finite float field.
func traceFloat(field, s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s: not a finite number: %q", field, s)
	}
	return v, nil
}

// traceArrival parses an arrival time in seconds (finite, >= 0).
func traceArrival(s string) (float64, error) {
	v, err := traceFloat("arrival_time", s)
	if err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, fmt.Errorf("arrival_time: must be >= 0, got %v", v)
	}
	return v, nil
}
