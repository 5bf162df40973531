package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMeanSD(t *testing.T) {
	m, sd := meanSD([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	if m != 5 || math.Abs(sd-math.Sqrt(32.0/7)) > 1e-12 {
		t.Errorf("meanSD = %v, %v; want 5 and sqrt(32/7)", m, sd)
	}
	if m, sd := meanSD([]float64{3}); m != 3 || sd != 0 {
		t.Errorf("one value: %v, %v", m, sd)
	}
}

func TestReplaceBetween(t *testing.T) {
	path := filepath.Join(t.TempDir(), "R.md")
	if err := os.WriteFile(path, []byte("a\n<!-- gavelsweep:las begin -->\nold\n<!-- gavelsweep:las end -->\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := replaceBetween(path, "las", []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := "a\n<!-- gavelsweep:las begin -->\nnew\n<!-- gavelsweep:las end -->\nb\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if err := replaceBetween(path, "other", nil); err == nil || !strings.Contains(err.Error(), "gavelsweep:other") {
		t.Errorf("missing markers: error %v", err)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, c := range []struct{ rates, window, want string }{
		{"5.6,x", "1:2", `-rates: "x"`},
		{"5.6", "3:2", "-window"},
		{"-1", "1:2", `-rates: "-1"`},
	} {
		if err := run(10, c.rates, 1, c.window, 1, ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("rates %q window %q: error %v, want %q", c.rates, c.window, err, c.want)
		}
	}
}
