package ui

import (
	"fmt"
	"math"

	"pipeplan/internal/format"
)

// Formatting at the UI edge: the core works in bytes, seconds and FLOP/s.

// gib formats bytes as GiB.
func gib(bytes float64) string { return fmt.Sprintf("%.1f GiB", bytes/(1<<30)) }

// secs formats a duration in seconds with two, one or no decimals in s, ms
// or µs (internal/format, whose choice of unit app's captions share).
func secs(s float64) string { return format.SecondsFixed(s) }

// pct formats a fraction as a percentage.
func pct(f float64) string { return fmt.Sprintf("%.1f %%", 100*f) }

// num formats a rate with thousands kept readable.
func num(v float64) string {
	if math.Abs(v) >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
