package model

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzParseRecompute checks that only the documented names (and "") are
// accepted, each round-trips, and errors name the field and quote the value.
func FuzzParseRecompute(f *testing.F) {
	for _, s := range []string{"", "none", "selective", "full", "Full", " full", "partial", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRecompute(s)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "recompute:") || !strings.Contains(msg, strconv.Quote(s)) {
				t.Fatalf("ParseRecompute(%q): error %q does not name the field and value", s, msg)
			}
			if r != "" {
				t.Fatalf("ParseRecompute(%q): error with value %q", s, r)
			}
			return
		}
		switch {
		case s == "" && r != RecomputeNone:
			t.Fatalf(`ParseRecompute(""): %q, want none`, r)
		case s != "" && string(r) != s:
			t.Fatalf("ParseRecompute(%q) = %q, want the name itself", s, r)
		case r != RecomputeNone && r != RecomputeSelective && r != RecomputeFull:
			t.Fatalf("ParseRecompute(%q) = %q, not a documented strategy", s, r)
		}
		if again, err := ParseRecompute(string(r)); err != nil || again != r {
			t.Fatalf("round trip of %q: %q, %v", r, again, err)
		}
	})
}
