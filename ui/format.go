package ui

import (
	"fmt"
	"math"
)

// Formatting at the UI edge: the core works in bytes, seconds and FLOP/s.

// gib formats bytes as GiB.
func gib(bytes float64) string { return fmt.Sprintf("%.1f GiB", bytes/(1<<30)) }

// secs formats a duration in seconds with a unit that keeps 3 significant digits.
func secs(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.2f s", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.1f ms", s*1e3)
	default:
		return fmt.Sprintf("%.0f µs", s*1e6)
	}
}

// pct formats a fraction as a percentage.
func pct(f float64) string { return fmt.Sprintf("%.1f %%", 100*f) }

// num formats a rate with thousands kept readable.
func num(v float64) string {
	if math.Abs(v) >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
