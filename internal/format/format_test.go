package format

import "testing"

// TestSeconds checks both styles at and around the unit boundaries,
// against the formatters app (secondsText) and ui (secs) had before they
// shared this package: %.3g and %.2f s / %.1f ms / %.0f µs.
func TestSeconds(t *testing.T) {
	for _, c := range []struct {
		s           float64
		sig3, fixed string
	}{
		{123.456, "123 s", "123.46 s"},
		{1.5, "1.5 s", "1.50 s"},
		{1, "1 s", "1.00 s"},
		{0.9996, "1e+03 ms", "999.6 ms"},
		{0.25, "250 ms", "250.0 ms"},
		{1e-3, "1 ms", "1.0 ms"},
		{0.000_999_6, "1e+03 µs", "1000 µs"},
		{12.34e-6, "12.3 µs", "12 µs"},
		{0, "0 µs", "0 µs"},
		{-2, "-2e+06 µs", "-2000000 µs"},
	} {
		if got := Seconds(c.s); got != c.sig3 {
			t.Errorf("Seconds(%v) = %q, want %q", c.s, got, c.sig3)
		}
		if got := SecondsFixed(c.s); got != c.fixed {
			t.Errorf("SecondsFixed(%v) = %q, want %q", c.s, got, c.fixed)
		}
	}
}

// TestCount checks the singular at 1 and the plural elsewhere, 0 included.
func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 microbatches"}, {1, "1 microbatch"}, {2, "2 microbatches"}} {
		if got := Count(c.n, "microbatch", "microbatches"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
