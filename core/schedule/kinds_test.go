package schedule

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Every registered kind is complete: a generator whose schedules carry the
// kind and the registered versioning, a description, a source; and it
// reaches the lists the CLI help and the validators print.
func TestRegistryComplete(t *testing.T) {
	if len(Kinds) != len(registry) {
		t.Fatalf("Kinds has %d entries, the registry %d", len(Kinds), len(registry))
	}
	seen := map[Kind]bool{}
	list, help := KindList("|"), KindHelp("  ")
	_, unknown := Kind("no-such-kind").Info()
	for i, in := range Registry() {
		k := in.Kind
		if Kinds[i] != k {
			t.Errorf("Kinds[%d] = %q, registry has %q", i, Kinds[i], k)
		}
		if seen[k] {
			t.Errorf("%q registered twice", k)
		}
		seen[k] = true
		if in.Description == "" || in.Source == "" || in.generate == nil {
			t.Errorf("%q: description %q, source %q, generator set %v", k, in.Description, in.Source, in.generate != nil)
		}
		if (in.inFlight == nil) != (in.bubble == nil) {
			t.Errorf("%q: has one closed form of in-flight count and bubble but not the other", k)
		}
		if got, err := k.Info(); err != nil || got.Kind != k {
			t.Errorf("%q.Info() = %q, %v", k, got.Kind, err)
		}
		if !strings.Contains("|"+list+"|", "|"+string(k)+"|") || !strings.Contains(help, string(k)+" ") || !strings.Contains(help, in.Description) {
			t.Errorf("%q missing from KindList %q or KindHelp:\n%s", k, list, help)
		}
		if unknown == nil || !strings.Contains(unknown.Error(), string(k)) {
			t.Errorf("the unknown-kind error %v does not list %q", unknown, k)
		}
		o := Options{Stages: 3, Microbatches: 6}
		if k == OneFOneBStar {
			o.Groups = []int{3, 2, 1}
		}
		if in.Chunked {
			o.Chunks = 2 // v = 1 is 1f1b
		}
		s, err := Generate(k, o)
		if err != nil {
			t.Errorf("%q: %v", k, err)
			continue
		}
		split := false
		for _, list := range s.Devices {
			for _, a := range list {
				split = split || a.Kind == BackwardInput || a.Kind == BackwardWeight
			}
		}
		if split != in.SplitsBackward {
			t.Errorf("%q: runs I and W actions %v, registered SplitsBackward %v", k, split, in.SplitsBackward)
		}
		if s.Kind != k || s.Versioning != in.Versioning {
			t.Errorf("%q: generated kind %q versioning %v, registered versioning %v", k, s.Kind, s.Versioning, in.Versioning)
		}
		if c := o; !in.Chunked {
			c.Chunks = 3
			if _, err := Generate(k, c); err == nil {
				t.Errorf("%q is not chunked but accepts 3 chunks", k)
			}
			c.Chunks = VChunks
			if _, err := Generate(k, c); (err == nil) != in.VShaped {
				t.Errorf("%q (V-shaped %v) with %d chunks: error %v", k, in.VShaped, VChunks, err)
			}
		}
		o.Batches = 2
		if _, err := Generate(k, o); (err == nil) != in.MultiBatch {
			t.Errorf("%q (multi-batch %v) with 2 batches: error %v", k, in.MultiBatch, err)
		}
	}
}

// core/schedule is the bottom of the engine: the registry every other
// package asks must not import any of them (no cycles, one direction).
func TestImportsNoPipeplan(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if path := strings.Trim(imp.Path.Value, `"`); strings.HasPrefix(path, "pipeplan/") {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}

// TestInFlightNeverGrows checks InFlight's promise to cost models: for
// every kind with a closed form, neither the stash nor the weight versions
// grow from one stage to the next (for V-shaped kinds: shrink).
func TestInFlightNeverGrows(t *testing.T) {
	checked := 0
	for _, in := range registry {
		if in.inFlight == nil {
			continue
		}
		for p := 1; p <= 24; p++ {
			for _, m := range []int{1, 2, p - 1, p, p + 1, 2 * p, 64} {
				for _, v := range []int{1, 2, 3, 5} {
					if m < 1 || (v > 1 && !in.Chunked) {
						continue
					}
					prevA, prevV := -1, -1
					for i := range p {
						a, ver, err := in.Kind.InFlight(p, i, m, v)
						if err != nil {
							prevA = -1 // 2bw needs m >= p: no stage has counts
							break
						}
						grows := a > prevA || ver > prevV
						if in.VShaped {
							grows = a < prevA || ver < prevV // the V turns on the last device: counts never shrink
						}
						if i > 0 && grows {
							t.Errorf("%s p=%d m=%d v=%d: stage %d keeps %d in flight and %d versions, stage %d %d and %d", in.Kind, p, m, v, i, a, ver, i-1, prevA, prevV)
						}
						prevA, prevV = a, ver
						checked++
					}
				}
			}
		}
	}
	if checked < 1000 {
		t.Errorf("only %d stages checked", checked)
	}
}
