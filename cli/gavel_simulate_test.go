package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestGavelSimulateCLI(t *testing.T) {
	args := []string{"gavel", "simulate", "--cluster", "4:4:4", "--policy", "max_min_fairness_perf",
		"--jobs", "12", "--rate", "2", "--seed", "3", "--window", "2:10", "--json"}
	var out bytes.Buffer
	if err := Run(args, &out); err != nil {
		t.Fatal(err)
	}
	var got struct {
		NumJobs    int     `json:"num_jobs"`
		WindowJobs int     `json:"window_jobs"`
		AvgJCT     float64 `json:"avg_jct_s"`
		Policy     string  `json:"policy"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if got.NumJobs != 12 || got.WindowJobs != 8 || !(got.AvgJCT > 0) || got.Policy != "max_min_fairness_perf" {
		t.Fatalf("output %+v", got)
	}
	out.Reset()
	if err := Run(args[:len(args)-1], &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "average JCT") {
		t.Fatalf("table output:\n%s", out.String())
	}
}

func TestGavelSimulateCLIErrors(t *testing.T) {
	cases := map[string][]string{
		"--policy: required": {},
		"unknown policy":     {"--policy", "nope"},
		"--cluster":          {"--policy", "fifo", "--cluster", "0:0:0"},
		"--window":           {"--policy", "fifo", "--window", "5:2"},
		"--trace":            {"--policy", "fifo", "--trace", "/nonexistent/file.trace"},
		"jobs_per_hour":      {"--policy", "fifo", "--rate", "-1"},
		"--models":           {"--policy", "fifo", "--models", "A3C,GPT"},
		"--durations-days":   {"--policy", "fifo", "--durations-days", "1,NaN"},
	}
	for want, args := range cases {
		err := Run(append([]string{"gavel", "simulate"}, args...), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: err = %v, want %q", args, err, want)
		}
	}
}
