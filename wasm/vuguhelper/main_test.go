package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPatchVuguScript applies the patches to the helper script of the vugu
// this module requires: every pattern is found (a vugu upgrade that moves
// one fails here, not in the browser), and each replacement is in place.
func TestPatchVuguScript(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/vugu/vugu").Output()
	if err != nil {
		t.Fatalf("go list vugu: %v", err)
	}
	script, err := helperScript(filepath.Join(strings.TrimSpace(string(out)), "domrender", "renderer-js-script.go"))
	if err != nil {
		t.Fatal(err)
	}
	patched, err := patch(script)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range patches {
		if strings.Count(patched, p.new) != p.count {
			t.Errorf("patched script has %d of %q, want %d", strings.Count(patched, p.new), p.new, p.count)
		}
	}
	if _, err := patch(strings.Replace(script, patches[2].old, "", 1)); err == nil || !strings.Contains(err.Error(), "has 0 of") {
		t.Errorf("a script without a pattern: error %v, want one naming the pattern", err)
	}
}
