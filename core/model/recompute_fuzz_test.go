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

// FuzzParseRecomputeModules checks that a parsed list holds only the
// documented modules and round-trips through its String, and that a
// rejected one names the field and quotes the offending name.
func FuzzParseRecomputeModules(f *testing.F) {
	for _, s := range []string{"", "core_attn", "moe_act,layernorm", "mla_up_proj mlp", "moe,,shared_experts", "mlp,mlp", "attn", " ,", "\xff", "core_attn,moe_act,layernorm,mla_up_proj,mlp,moe,shared_experts"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := ParseRecomputeModules(s)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "recompute_modules: \"") || set != 0 {
				t.Fatalf("ParseRecomputeModules(%q): error %q (set %v) does not name the field and the value", s, msg, set)
			}
			return
		}
		if set >= 1<<moduleCount {
			t.Fatalf("ParseRecomputeModules(%q) = %b, beyond the %d modules", s, set, moduleCount)
		}
		again, err := ParseRecomputeModules(set.String())
		if err != nil || (again != set && !(set == 0 && again == 1<<ModuleCoreAttn)) {
			t.Fatalf("round trip of %q: %q gives %b, %v; want %b", s, set.String(), again, err, set)
		}
	})
}
