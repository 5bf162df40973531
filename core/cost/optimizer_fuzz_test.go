package cost

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzParseOptimizer checks that only the documented optimizers (and "")
// are accepted, each round-trips and has a positive per-parameter memory,
// and errors name the field and quote the value.
func FuzzParseOptimizer(f *testing.F) {
	for _, s := range []string{"", "sgd", "adam", "mixed-adam", "mixed-adam-fp32-grads", "Adam", "adamw", " sgd", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOptimizer(s)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "optimizer:") || !strings.Contains(msg, strconv.Quote(s)) {
				t.Fatalf("ParseOptimizer(%q): error %q does not name the field and value", s, msg)
			}
			return
		}
		if s == "" && o != MixedAdam || s != "" && string(o) != s {
			t.Fatalf("ParseOptimizer(%q) = %q", s, o)
		}
		if again, err := ParseOptimizer(string(o)); err != nil || again != o {
			t.Fatalf("round trip of %q: %q, %v", o, again, err)
		}
		for _, w := range []float64{1, 2, 4} {
			b, err := o.BytesPerParam(w)
			if err != nil {
				t.Fatalf("accepted optimizer %q has no memory model: %v", o, err)
			}
			if !(b.Weights > 0 && b.Gradients > 0 && b.Optimizer > 0) || b.Total() > 16+2*w {
				t.Fatalf("optimizer %q at %v B/value: %+v bytes per parameter", o, w, b)
			}
		}
	})
}
