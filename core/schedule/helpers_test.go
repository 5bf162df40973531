package schedule

import (
	"context"
	"math"
	"testing"
)

// simulate generates and simulates a schedule, failing the test on error.
func simulate(t testing.TB, kind Kind, o Options, c Costs) *Timeline {
	t.Helper()
	s, err := Generate(kind, o)
	if err != nil {
		t.Fatalf("Generate(%s, %+v): %v", kind, o, err)
	}
	tl, err := Simulate(context.Background(), s, c, nil)
	if err != nil {
		t.Fatalf("Simulate(%s, %+v): %v", kind, o, err)
	}
	return tl
}

// near reports whether a and b agree to 1e-9 relative.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }

// computeOrder returns device d's forward and backward actions as
// "F1 F2 B1 ..." with 1-based microbatch numbers, as the papers' figures
// number inputs; interleaved chunks get a prime (F1').
func computeOrder(tl *Timeline, d int) []string {
	var out []string
	for _, o := range tl.Ops[d] {
		if !o.Kind.isCompute() {
			continue
		}
		s := o.Kind.String() + itoa(o.Microbatch+1)
		if o.Chunk > 0 {
			s += "'"
		}
		out = append(out, s)
	}
	return out
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
