package modelprofiles

import (
	"strings"
	"testing"
)

// TestEveryProfileLoads parses every embedded profile and checks its state
// count against the table of the pipedream anchor README.
func TestEveryProfileLoads(t *testing.T) {
	for _, in := range List() {
		g, err := Graph(in.Name)
		if err != nil {
			t.Fatalf("%s: %v", in.Name, err)
		}
		if g.Name != in.Name || g.MicrobatchSize != in.MicrobatchSize {
			t.Errorf("%s: name/microbatch = %q/%d", in.Name, g.Name, g.MicrobatchSize)
		}
		if in.States == 0 {
			continue // too branchy: checked in core/model's tests
		}
		s, err := g.States()
		if err != nil {
			t.Fatalf("%s: %v", in.Name, err)
		}
		if s.Len() != in.States {
			t.Errorf("%s: %d states, want %d", in.Name, s.Len(), in.States)
		}
	}
}

func TestUnknownName(t *testing.T) {
	if _, err := Graph("vgg19"); err == nil || !strings.Contains(err.Error(), `"vgg19"`) {
		t.Fatalf("err = %v", err)
	}
}
