package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScheduleCommandJSON(t *testing.T) {
	var out bytes.Buffer
	if err := Run([]string{"schedule", "--kind", "gpipe", "--stages", "4", "--microbatches", "8", "--json"}, &out); err != nil {
		t.Fatal(err)
	}
	var r struct {
		StepSeconds    float64 `json:"step_seconds"`
		BubbleFraction float64 `json:"bubble_fraction"`
		Devices        []struct {
			PeakActivations    int `json:"peak_activations"`
			PeakWeightVersions int `json:"peak_weight_versions"`
			Ops                []struct {
				Kind       string  `json:"kind"`
				Microbatch int     `json:"microbatch"`
				Chunk      int     `json:"chunk"`
				Start      float64 `json:"start"`
				End        float64 `json:"end"`
			} `json:"ops"`
		} `json:"devices"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	// GPipe, p = 4, m = 8, t_f = 1, t_b = 2: step (m+p−1)(t_f+t_b), bubble (p−1)/(m+p−1).
	if r.StepSeconds != 33 || math.Abs(r.BubbleFraction-3.0/11) > 1e-12 || len(r.Devices) != 4 {
		t.Fatalf("step %v, bubble %v, %d devices; want 33, 3/11, 4", r.StepSeconds, r.BubbleFraction, len(r.Devices))
	}
	d := r.Devices[3]
	if d.PeakActivations != 8 || d.PeakWeightVersions != 1 || d.Ops[0].Kind != "F" || d.Ops[0].Start != 3 || d.Ops[0].End != 4 {
		t.Errorf("device 3: %+v", d)
	}
}

func TestScheduleCommandTableSVGAndCSV(t *testing.T) {
	dir := t.TempDir()
	svg, csv := filepath.Join(dir, "t.svg"), filepath.Join(dir, "t.csv")
	var out bytes.Buffer
	args := []string{"schedule", "--kind", "interleaved", "--stages", "2", "--microbatches", "4", "--chunks", "2", "--svg", svg, "--csv", csv, "--grid"}
	if err := Run(args, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"interleaved: 2 devices, 4 stages (2 chunks per device), 4 microbatches", "peak activations", "Step 00: 0F0", "Rank 1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if b, err := os.ReadFile(svg); err != nil || !bytes.HasPrefix(b, []byte("<svg")) {
		t.Errorf("svg file: %v, %.20q", err, b)
	}
	if b, err := os.ReadFile(csv); err != nil || !strings.HasPrefix(string(b), "0F0,0F1,") {
		t.Errorf("csv file: %v, %.20q", err, b)
	}
}

func TestScheduleCommandErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--kind", "nope"}, "kind"},
		{[]string{"--stages", "0"}, "stages"},
		{[]string{"--kind", "interleaved", "--microbatches", "6"}, "multiple of stages"},
		{[]string{"--kind", "1f1b-rr", "--replicas", "2,x"}, "--replicas"},
		{[]string{"--kind", "1f1b-star", "--period", "1"}, "--period"},
		{[]string{"--fwd", "-1"}, "fwd_seconds"},
		{[]string{"extra"}, "unexpected argument"},
	} {
		var out bytes.Buffer
		err := Run(append([]string{"schedule"}, c.args...), &out)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("schedule %v: got %v, want an error containing %q", c.args, err, c.want)
		}
	}
}
