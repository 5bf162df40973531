package schedule

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
)

// Every generated schedule survives WriteCSV/ReadCSV; the torch form loses
// only versions and OPT_STEP.
func TestCSVRoundTrip(t *testing.T) {
	for _, c := range []struct {
		kind Kind
		o    Options
	}{
		{GPipe, Options{Stages: 3, Microbatches: 4}},
		{OneFOneB, Options{Stages: 4, Microbatches: 6}},
		{Interleaved, Options{Stages: 2, Microbatches: 4, Chunks: 3}},
		{TwoBW, Options{Stages: 3, Microbatches: 3, Batches: 2}},
		{ZBH1, Options{Stages: 3, Microbatches: 5}},
		{ZBV, Options{Stages: 3, Microbatches: 6}},
		{OneFOneBRR, Options{Stages: 2, Microbatches: 5, Replicas: []int{2, 1}}},
	} {
		s, err := Generate(c.kind, c.o)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteCSV(&buf, s, false); err != nil {
			t.Fatal(err)
		}
		got, err := ReadCSV(&buf)
		if err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		if !reflect.DeepEqual(got.Devices, s.Devices) || got.Stages != s.Stages || got.Chunks != s.Chunks || got.TotalMicrobatches() != s.TotalMicrobatches() {
			t.Errorf("%s: round trip changed the schedule", c.kind)
		}
		buf.Reset()
		if err := WriteCSV(&buf, s, true); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(buf.String(), "OPT_STEP") || strings.Contains(buf.String(), "v") {
			t.Errorf("%s: torch CSV has OPT_STEP or versions:\n%s", c.kind, buf.String())
		}
		if _, err := ReadCSV(&buf); err != nil {
			t.Errorf("%s: torch form does not load: %v", c.kind, err)
		}
	}
}

// A CSV as torch writes it (with empty cells for idle steps) loads and
// simulates like the generated 1F1B.
func TestReadTorchCSV(t *testing.T) {
	const in = "0F0,0F1,0B0,0B1\n,1F0,1B0,1F1,1B1\n"
	s, err := ReadCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := Simulate(context.Background(), s, Uniform(1, 2, 0, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	ref := simulate(t, OneFOneB, Options{Stages: 2, Microbatches: 2}, Uniform(1, 2, 0, 0))
	if tl.StepSeconds != ref.StepSeconds {
		t.Errorf("step %v, want 1F1B's %v", tl.StepSeconds, ref.StepSeconds)
	}
	for in, want := range map[string]string{
		"0F0,0X1\n":     "row 1 column 2",
		"0F0\n0B0\n":    "backward on another device",
		"0F0,\"0B0\n":   "csv:",
		"0F0,0B0,1F0\n": "cannot hold",
	} {
		if _, err := ReadCSV(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadCSV(%q): got %v, want %q", in, err, want)
		}
	}
}

// FuzzReadCSV checks that the loader never panics, that what it accepts
// is valid, simulates without panicking and round-trips through WriteCSV.
func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{
		"0F0,0F1,0B0,0B1\n,1F0,1B0,1F1,1B1\n",
		"0F0,0I0,0W0,0OPT_STEP\n",
		"0F0v0,0B0v0\n",
		"0F0,1F0,1B0,0B0\n",
		"0F0,0B0\n1F0,1B0\n",
		"1F0,1B0\n0F0,0B0\n",
		"0F0,0SEND_F0,0RECV_B0,0B0\n1RECV_F0,1F0,1B0,1SEND_B0\n",
		"0F0,0B0,0REDUCE_GRAD\n",
		"0F0,0F1,1F0,0I0,1F1,1I0,1W0,1I1,1W1,0I1,0W0,0W1\n",  // zb-v on one device
		"0F0,3F0,3I0,0I0,3W0,0W0\n1F0,2F0,2I0,1I0,2W0,1W0\n", // zb-v's V on two
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadCSV(bytes.NewReader(data))
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("accepted an invalid schedule: %v", err)
		}
		if tl, err := Simulate(context.Background(), s, Uniform(1, 2, 0.5, 0.1), nil); err == nil && !(tl.BubbleFraction >= 0 && tl.BubbleFraction <= 1) {
			t.Fatalf("bubble fraction %v", tl.BubbleFraction)
		}
		var buf bytes.Buffer
		if err := WriteCSV(&buf, s, false); err != nil {
			t.Fatal(err)
		}
		again, err := ReadCSV(&buf)
		if err != nil || !reflect.DeepEqual(again.Devices, s.Devices) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
