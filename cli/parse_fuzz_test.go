package cli

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// The flag-value parsers of the CLI commands: each accepts what its flag
// documents, errors name the flag and the bad value, and accepted values
// round-trip through their text form.

// maxFuzzErr bounds an error message: the flag name, a fixed text and the
// bad value quoted (at most the whole input, escaped).
func maxFuzzErr(inputs ...string) int {
	n := 200
	for _, s := range inputs {
		n += len(strconv.Quote(s))
	}
	return n
}

func FuzzParseLevels(f *testing.F) {
	for _, c := range [][2]string{
		{"4,4", "16e9,1.25e9"}, {"8", "1e11"}, {"", ""}, {"4,4", "1e9"}, {" 2 , 3 ", " 1e9 ,2e9"},
		{"0", "1e9"}, {"2", "-1"}, {"2", "NaN"}, {"2", "Inf"}, {"2", "2e18"}, {"99999999999999999999", "1"},
		{"2", "0x1p-1074"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, sizes, bandwidths string) {
		levels, err := parseLevels(sizes, bandwidths)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "--level-sizes") && !strings.HasPrefix(msg, "--level-bandwidths") {
				t.Fatalf("parseLevels(%q, %q): error %q names no flag", sizes, bandwidths, msg)
			}
			if len(msg) > maxFuzzErr(sizes, bandwidths) {
				t.Fatalf("parseLevels: error of %d bytes for %d bytes of input", len(msg), len(sizes)+len(bandwidths))
			}
			return
		}
		if want := strings.Count(sizes, ",") + 1; len(levels) != want {
			t.Fatalf("parseLevels(%q, %q): %d levels, want %d", sizes, bandwidths, len(levels), want)
		}
		var ss, bs []string
		for i, l := range levels {
			// The range is the request's to check (plan.levels); the
			// parser only guarantees finite numbers.
			if math.IsNaN(l.BandwidthBytesPerSec) || math.IsInf(l.BandwidthBytesPerSec, 0) {
				t.Fatalf("parseLevels(%q, %q): level %d = %+v is not a finite number", sizes, bandwidths, i, l)
			}
			ss = append(ss, strconv.Itoa(l.Workers))
			bs = append(bs, strconv.FormatFloat(l.BandwidthBytesPerSec, 'g', -1, 64))
		}
		again, err := parseLevels(strings.Join(ss, ","), strings.Join(bs, ","))
		if err != nil || len(again) != len(levels) {
			t.Fatalf("round trip of %v: %v, %v", levels, again, err)
		}
		for i := range again {
			if again[i] != levels[i] {
				t.Fatalf("round trip: level %d %+v, want %+v", i, again[i], levels[i])
			}
		}
	})
}

func FuzzParseDurationsDays(f *testing.F) {
	for _, s := range []string{"", "1", "0.5,2,7", " 1 , 2 ", "0", "-1", "NaN", "Inf", "1e305", "1,,2", "4.9e-324", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		ds, err := parseDurationsDays(list)
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, "--durations-days") || len(msg) > maxFuzzErr(list) {
				t.Fatalf("parseDurationsDays(%q): error %q does not name the flag or is too long", list, msg)
			}
			return
		}
		if list == "" {
			if ds != nil {
				t.Fatalf(`parseDurationsDays(""): %v, want nil`, ds)
			}
			return
		}
		if want := strings.Count(list, ",") + 1; len(ds) != want {
			t.Fatalf("parseDurationsDays(%q): %d durations, want %d", list, len(ds), want)
		}
		var days []string
		for i, d := range ds {
			if !(d > 0) || math.IsInf(d, 0) {
				t.Fatalf("parseDurationsDays(%q): duration %d = %v s, want positive and finite", list, i, d)
			}
			days = append(days, strconv.FormatFloat(d/86400, 'g', -1, 64))
		}
		again, err := parseDurationsDays(strings.Join(days, ","))
		if err != nil || len(again) != len(ds) {
			t.Fatalf("round trip of %v: %v, %v", ds, again, err)
		}
		for i := range again {
			if math.Abs(again[i]-ds[i]) > 1e-12*ds[i] {
				t.Fatalf("round trip: duration %d %v s, want %v s", i, again[i], ds[i])
			}
		}
	})
}

func FuzzParseWindow(f *testing.F) {
	for _, s := range []string{"", "0:10", "5:6", "6:5", "5:5", "-1:3", ":", "1:", ":2", "1:2:3", "+1:+2", "9223372036854775807:1", "0:9223372036854775808"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		from, to, err := parseWindow(s)
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, "--window") || !strings.Contains(msg, strconv.Quote(s)) {
				t.Fatalf("parseWindow(%q): error %q does not name the flag and value", s, msg)
			}
			if from != 0 || to != 0 {
				t.Fatalf("parseWindow(%q): error with window %d:%d", s, from, to)
			}
			return
		}
		if s == "" {
			if from != 0 || to != 0 {
				t.Fatalf(`parseWindow(""): %d:%d, want 0:0 (every job)`, from, to)
			}
			return
		}
		if from < 0 || to <= from {
			t.Fatalf("parseWindow(%q) = %d:%d, want 0 <= FROM < TO", s, from, to)
		}
		if f2, t2, err := parseWindow(strconv.Itoa(from) + ":" + strconv.Itoa(to)); err != nil || f2 != from || t2 != to {
			t.Fatalf("round trip of %d:%d: %d:%d, %v", from, to, f2, t2, err)
		}
	})
}

func FuzzParseInts(f *testing.F) {
	for _, s := range []string{"1", "1,2,3", " 4 , 5", "", ",", "1,,2", "-3", "x", "99999999999999999999", "+7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, err := parseInts(s)
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, strconv.Quote(s)) || len(msg) > maxFuzzErr(s) {
				t.Fatalf("parseInts(%q): error %q does not quote the value or is too long", s, msg)
			}
			return
		}
		if want := strings.Count(s, ",") + 1; len(ns) != want {
			t.Fatalf("parseInts(%q): %d integers, want %d", s, len(ns), want)
		}
		var parts []string
		for _, n := range ns {
			parts = append(parts, strconv.Itoa(n))
		}
		again, err := parseInts(strings.Join(parts, ","))
		if err != nil || len(again) != len(ns) {
			t.Fatalf("round trip of %v: %v, %v", ns, again, err)
		}
		for i := range again {
			if again[i] != ns[i] {
				t.Fatalf("round trip: %v, want %v", again, ns)
			}
		}
	})
}

// FuzzParsePrices fuzzes the price list of "gavel allocate" (--prices); the
// instance's validation then checks the count and range of the prices.
func FuzzParsePrices(f *testing.F) {
	for _, s := range []string{"0.9,1.46,3.06", "1", " 1 , 2 ", "1,-2,3", "", ",", "NaN", "Inf", "1e400", "x", "0x1p3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := parsePrices(s)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "--prices[") || len(msg) > maxFuzzErr(s) {
				t.Fatalf("parsePrices(%q): error %q does not name the flag or is too long", s, msg)
			}
			return
		}
		if want := strings.Count(s, ",") + 1; len(ps) != want {
			t.Fatalf("parsePrices(%q): %d prices, want %d", s, len(ps), want)
		}
		var parts []string
		for _, p := range ps {
			parts = append(parts, strconv.FormatFloat(p, 'g', -1, 64))
		}
		again, err := parsePrices(strings.Join(parts, ","))
		if err != nil || len(again) != len(ps) {
			t.Fatalf("round trip of %v: %v, %v", ps, again, err)
		}
		for i := range again {
			if again[i] != ps[i] && !(math.IsNaN(again[i]) && math.IsNaN(ps[i])) {
				t.Fatalf("round trip: %v, want %v", again, ps)
			}
		}
	})
}
