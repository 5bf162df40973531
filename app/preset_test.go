package app

import "testing"

// TestKnownModel checks that every listed model and the special ones are
// known, and a made-up preset is not.
func TestKnownModel(t *testing.T) {
	for _, m := range Models() {
		if !KnownModel(m.ID) {
			t.Errorf("listed model %q is not known", m.ID)
		}
	}
	for _, id := range []string{"hf", "custom"} {
		if !KnownModel(id) {
			t.Errorf("%q is not known", id)
		}
	}
	for _, id := range []string{"gpt-9000", ""} {
		if KnownModel(id) {
			t.Errorf("%q is known", id)
		}
	}
}
