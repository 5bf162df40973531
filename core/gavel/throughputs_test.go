package gavel

import (
	"math"
	"strings"
	"testing"
)

// TestDefaultThroughputsCounts checks the embedded table against the counts
// documented for Gavel's simulation_throughputs.json.
func TestDefaultThroughputsCounts(t *testing.T) {
	tt := DefaultThroughputs()
	want := []string{"k80", "k80_unconsolidated", "p100", "p100_unconsolidated", "v100", "v100_unconsolidated"}
	if got := strings.Join(tt.WorkerTypes(), ","); got != strings.Join(want, ",") {
		t.Fatalf("worker types = %s, want %v", got, want)
	}
	nulls, pairs := 0, 0
	for _, wt := range want {
		keys := len(tt.isolated[wt])
		wantKeys := 83
		if wt == "k80_unconsolidated" {
			wantKeys = 77
		}
		if keys != wantKeys {
			t.Errorf("%s: %d job keys, want %d", wt, keys, wantKeys)
		}
		nulls += keys
		pairs += len(tt.colocated[wt])
	}
	if nulls != 492 || pairs != 10338 {
		t.Errorf("got %d isolated values and %d pairs, want 492 and 10338", nulls, pairs)
	}
}

// TestDefaultThroughputsValues checks values quoted in the anchor README.
func TestDefaultThroughputsValues(t *testing.T) {
	tt := DefaultThroughputs()
	cases := []struct {
		wt   string
		k    JobKey
		want float64
	}{
		{"v100", JobKey{"ResNet-18 (batch size 16)", 1}, 32.35},
		{"v100", JobKey{"ResNet-18 (batch size 16)", 8}, 382.6},
		{"k80", JobKey{"ResNet-50 (batch size 128)", 2}, 0},
		{"k80", JobKey{"ResNet-50 (batch size 128)", 8}, 0},
	}
	for _, c := range cases {
		got, err := tt.Isolated(c.wt, c.k)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-c.want) > 0.01 {
			t.Errorf("%s %s = %v, want %v", c.wt, c.k, got, c.want)
		}
	}
	if _, err := tt.Isolated("a100", JobKey{"A3C", 1}); err == nil || !strings.Contains(err.Error(), "a100") {
		t.Errorf("unknown worker type: err = %v", err)
	}
	if _, err := tt.Isolated("v100", JobKey{"A3C", 2}); err == nil {
		t.Errorf("A3C at scale factor 2 should be unknown")
	}
}

// TestColocatedSymmetric checks T[w][A][B] == reversed(T[w][B][A]).
func TestColocatedSymmetric(t *testing.T) {
	tt := DefaultThroughputs()
	for wt, byPair := range tt.colocated {
		for p, v := range byPair {
			r, err := tt.Colocated(wt, p[1], p[0])
			if err != nil {
				t.Fatal(err)
			}
			if r[0] != v[1] || r[1] != v[0] {
				t.Fatalf("%s %s/%s = %v, reverse %v", wt, p[0], p[1], v, r)
			}
		}
	}
}

// TestPlacedUsesUnconsolidated checks placement sensitivity: an
// unconsolidated placement reads the "_unconsolidated" worker type, falling
// back to the consolidated value where the data has none.
func TestPlacedUsesUnconsolidated(t *testing.T) {
	tt := DefaultThroughputs()
	k := JobKey{"ResNet-18 (batch size 16)", 8}
	cons, _ := tt.Isolated("v100", k)
	uncons, _ := tt.Isolated("v100_unconsolidated", k)
	if cons == uncons {
		t.Fatalf("test needs differing values, both %v", cons)
	}
	if got, _ := tt.Placed("v100", k, false); got != uncons {
		t.Errorf("Placed unconsolidated = %v, want %v", got, uncons)
	}
	if got, _ := tt.Placed("v100", k, true); got != cons {
		t.Errorf("Placed consolidated = %v, want %v", got, cons)
	}
	missing := JobKey{"ResNet-50 (batch size 128)", 4}
	want, _ := tt.Isolated("k80", missing)
	if got, err := tt.Placed("k80", missing, false); err != nil || got != want {
		t.Errorf("Placed fallback = %v, %v; want %v", got, err, want)
	}
}

// TestJobTableMatchesThroughputs checks every job type has scale factor 1 on
// every worker type, and scale factors 2/4/8 exactly when distributed.
func TestJobTableMatchesThroughputs(t *testing.T) {
	jt := DefaultJobTable()
	if len(jt) != 26 {
		t.Fatalf("job table has %d types, want 26", len(jt))
	}
	tt := DefaultThroughputs()
	for _, j := range jt {
		for _, sf := range []int{1, 2, 4, 8} {
			_, err := tt.Isolated("v100", JobKey{j.Model, sf})
			if has := err == nil; has != (sf == 1 || j.Distributed) {
				t.Errorf("%s sf %d: present=%v, distributed=%v", j.Model, sf, has, j.Distributed)
			}
		}
	}
	if jt[24].Model != "A3C" || jt[24].BatchSize != 0 {
		t.Errorf("job 24 = %+v, want A3C without batch size", jt[24])
	}
}

func TestParseJobKey(t *testing.T) {
	good := map[string]JobKey{
		"('ResNet-50 (batch size 64)', 1)": {"ResNet-50 (batch size 64)", 1},
		"('LM (batch size 20)', 8)":        {"LM (batch size 20)", 8},
		"('it's', 12)":                     {"it's", 12},
	}
	for s, want := range good {
		got, err := ParseJobKey(s)
		if err != nil || got != want {
			t.Errorf("ParseJobKey(%q) = %v, %v; want %v", s, got, err, want)
		}
		if back := got.String(); back != s {
			t.Errorf("String() = %q, want %q", back, s)
		}
	}
	for _, s := range []string{"", "('A3C', 0)", "('A3C', -1)", "('', 1)", "(A3C, 1)", "('A3C', 1", "('A3C', x)", "('A3C', 99999999999999999999)"} {
		if _, err := ParseJobKey(s); err == nil {
			t.Errorf("ParseJobKey(%q): want error", s)
		}
	}
}

func TestParseThroughputsErrors(t *testing.T) {
	cases := map[string]string{
		`{}`:                                  "no worker types",
		`{"k80": {"('A', 1)": {}}}`:           "missing",
		`{"k80": {"('A', 1)": {"null": -1}}}`: "must be a finite number >= 0",
		`{"k80": {"bad": {"null": 1}}}`:       "job key",
		`{"k80": {"('A', 1)": {"null": 1, "('B', 2)": [1, 1]}}}`:  "scale factors differ",
		`{"k80": {"('A', 1)": {"null": 1, "('B', 1)": [1, -2]}}}`: "[1]",
		`[1]`: "throughputs",
		`{"k80": {"('A', 1)": {"null": [1, 2]}}}`:                   "('A', 1).null: want a number, got a pair",
		`{"k80": {"('A', 1)": {"null": "7"}}}`:                      `('A', 1).null: want a number, got "\"7\""`,
		`{"k80": {"('A', 1)": {"null": 1, "('B', 1)": 3}}}`:         "('B', 1): want [self, other], got a number",
		`{"k80": {"('A', 1)": {"null": 1, "('B', 1)": [1, 2, 3]}}}`: "('B', 1): want [self, other], got 3 values",
		`{"k80": {"('A', 1)": {"null": 1, "('B', 1)": [null, 2]}}}`: "('B', 1): want a number",
	}
	for in, want := range cases {
		_, err := ParseThroughputs([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseThroughputs(%s): err = %v, want containing %q", in, err, want)
		}
	}
}

// FuzzParseThroughputs checks the parser never panics and that whatever it
// accepts holds only finite, non-negative values.
func FuzzParseThroughputs(f *testing.F) {
	f.Add([]byte(`{"k80": {"('A3C', 1)": {"null": 1.5, "('A3C', 1)": [0.5, 0.5]}}}`))
	f.Add([]byte(`{"v100": {"('LM (batch size 5)', 8)": {"null": 0}}}`))
	f.Add([]byte(`{"k80": {"('A', 1)": {"null": 1, "('B', 2)": [1, 1]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tt, err := ParseThroughputs(data)
		if err != nil {
			return
		}
		for _, wt := range tt.WorkerTypes() {
			for k, v := range tt.isolated[wt] {
				if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || k.ScaleFactor < 1 {
					t.Fatalf("accepted %s %s = %v", wt, k, v)
				}
			}
		}
	})
}

func FuzzParseJobKey(f *testing.F) {
	f.Add("('ResNet-50 (batch size 64)', 1)")
	f.Add("('', 0)")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseJobKey(s)
		if err != nil {
			return
		}
		if k.ScaleFactor < 1 || k.Model == "" {
			t.Fatalf("accepted %q as %+v", s, k)
		}
		back, err := ParseJobKey(k.String())
		if err != nil || back != k {
			t.Fatalf("round trip of %q: %+v, %v", s, back, err)
		}
	})
}
