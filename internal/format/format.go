// Package format formats quantities for people, in the one way every
// front end shares: app's timeline captions and the page's tables (ui)
// both write durations and counts with it.
package format

import "fmt"

// secondsUnit scales a duration in seconds to the largest of s, ms and µs
// that keeps it at 1 or more (µs below 1 ms, zero and negatives
// included); k is the unit's place, 0 for s, 1 for ms, 2 for µs.
func secondsUnit(s float64) (v float64, unit string, k int) {
	switch {
	case s >= 1:
		return s, "s", 0
	case s >= 1e-3:
		return s * 1e3, "ms", 1
	}
	return s * 1e6, "µs", 2
}

// Seconds formats a duration in s, ms or µs with three significant
// digits: "1.5 s", "250 ms", "12.3 µs".
func Seconds(s float64) string {
	v, unit, _ := secondsUnit(s)
	return fmt.Sprintf("%.3g %s", v, unit)
}

// SecondsFixed formats a duration in s, ms or µs with two, one and no
// decimals, which keeps columns of them aligned: "1.50 s", "250.0 ms",
// "12 µs".
func SecondsFixed(s float64) string {
	v, unit, k := secondsUnit(s)
	return fmt.Sprintf("%.*f %s", 2-k, v, unit)
}

// Count says n things with the noun's singular one or plural many:
// Count(1, "stage", "stages") is "1 stage", Count(8, …) "8 stages".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
