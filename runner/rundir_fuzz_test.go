package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseProbe: worker.py --probe's output is outside input (whatever the
// Python on PATH prints); an accepted probe has a device count >= 0, and an
// error is bounded whatever the output's size.
func FuzzParseProbe(f *testing.F) {
	f.Add([]byte(`{"torch_version": "2.3.0", "cuda_device_count": 8}`))
	f.Add([]byte(`{"torch_version": "1.13.0", "cuda_device_count": 0}`))
	f.Add([]byte(`{"cuda_device_count": -1}`))
	f.Add([]byte(`{"cuda_device_count": 1e3}`))
	f.Add([]byte(`{"cuda_device_count": 99999999999999999999}`))
	f.Add([]byte("Warning: CUDA initialization\n{\"cuda_device_count\": 2}"))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, out []byte) {
		pr, err := parseProbe(out)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "probe of the CUDA devices") || len(msg) > 9000 {
				t.Fatalf("parseProbe: error %.200q (%d bytes) does not say what failed or is unbounded", msg, len(msg))
			}
			return
		}
		if pr.CUDADeviceCount < 0 {
			t.Fatalf("parseProbe(%q): accepted %d devices", out, pr.CUDADeviceCount)
		}
	})
}

// FuzzParseReference: reference.json is written by worker.py --reference;
// an accepted one has as many losses as the run, all finite and > 0, and
// leaves a report that still encodes as JSON.
func FuzzParseReference(f *testing.F) {
	f.Add([]byte(`{"losses":[2.5,2.25,2]}`), 2.5, 2.0)
	f.Add([]byte(`{"losses":[1e-300,1,1]}`), 1e308, 0.0)
	f.Add([]byte(`{"losses":[0,1,1]}`), 1.0, 1.0)
	f.Add([]byte(`{"losses":[1,1]}`), 1.0, 1.0)
	f.Add([]byte(`{"losses":null}`), 1.0, 1.0)
	f.Add([]byte(`{"losses":[NaN,1,1]}`), 1.0, 1.0)
	f.Add([]byte(`[]`), 1.0, 1.0)
	f.Fuzz(func(t *testing.T, data []byte, first, last float64) {
		// The run's losses are parseResult's: finite and >= 0.
		if !finiteNonNegative(first) || !finiteNonNegative(last) {
			return
		}
		rep := &Report{Losses: []float64{first, (first + last) / 2, last}}
		err := parseReference(data, rep)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "reference") || len(msg) > 1000 {
				t.Fatalf("parseReference(%q): error %.200q does not name reference.json or is unbounded", data, msg)
			}
			if rep.MaxLossRelDiff != nil || rep.ReferenceLosses != nil {
				t.Fatalf("parseReference(%q): error %v but the report was changed", data, err)
			}
			return
		}
		if len(rep.ReferenceLosses) != len(rep.Losses) {
			t.Fatalf("parseReference(%q): %d reference losses for %d steps", data, len(rep.ReferenceLosses), len(rep.Losses))
		}
		for i, l := range rep.ReferenceLosses {
			if !(l > 0) || math.IsInf(l, 0) {
				t.Fatalf("parseReference(%q): accepted losses[%d] = %v", data, i, l)
			}
		}
		if d := rep.MaxLossRelDiff; d == nil || !(*d >= 0) || math.IsInf(*d, 0) {
			t.Fatalf("parseReference(%q): max relative difference %v, want finite and >= 0", data, d)
		}
		if _, err := json.Marshal(rep); err != nil {
			t.Fatalf("parseReference(%q): the report no longer encodes: %v", data, err)
		}
	})
}

// FuzzTails: the workers' output (torchrun's and every rank's) is outside
// input. Every line reaches the log exactly once, with "[torchrun] " added
// unless it carries a rank prefix; the result does not depend on how the
// output is split into writes; the lines kept per rank and the failure
// text are bounded.
func FuzzTails(f *testing.F) {
	f.Add([]byte("[rank 0] step 1\n[rank 1] Traceback (most recent call last):\n[rank 1] RuntimeError: x\ntorchrun: failed\n"), uint16(7))
	f.Add([]byte("[rank 99999999999999999999] Error\n[rank 007] Error: leading zeros\n[rank -1] x\n[rank 1]no space"), uint16(1))
	f.Add([]byte("no newline at the end"), uint16(3))
	f.Add([]byte("\n\n\r\n[rank 2] \n"), uint16(0))
	f.Add(bytes.Repeat([]byte("[rank 3] Error line\n"), 40), uint16(13))
	f.Add(append(bytes.Repeat([]byte("x"), maxLineBytes+5), "\n[rank 1] Error\n"...), uint16(4095))
	f.Fuzz(func(t *testing.T, out []byte, chunk uint16) {
		var whole, split bytes.Buffer
		a, b := newTails(&whole), newTails(&split)
		a.Write(out)
		a.flush()
		step := int(chunk)%64 + 1
		for i := 0; i < len(out); i += step {
			b.Write(out[i:min(i+step, len(out))])
		}
		b.flush()
		if whole.String() != split.String() || a.failure() != b.failure() {
			t.Fatalf("output split into writes of %d bytes gives another log or failure", step)
		}
		if len(out) > maxLineBytes {
			return // a line may have been cut in two
		}
		var lines []string
		if len(out) > 0 {
			lines = strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		}
		logged := strings.Split(strings.TrimSuffix(whole.String(), "\n"), "\n")
		if whole.Len() == 0 {
			logged = nil
		}
		if len(logged) != len(lines) {
			t.Fatalf("%d lines in, %d logged", len(lines), len(logged))
		}
		for i, l := range lines {
			if logged[i] != l && logged[i] != "[torchrun] "+l {
				t.Fatalf("line %d %q logged as %q", i, l, logged[i])
			}
		}
		if len(a.runner) > tailLines {
			t.Fatalf("%d torchrun lines kept, want at most %d", len(a.runner), tailLines)
		}
		for r, kept := range a.ranks {
			if len(kept) > tailLines {
				t.Fatalf("rank %d: %d lines kept, want at most %d", r, len(kept), tailLines)
			}
			for _, l := range kept {
				m := rankPrefix.FindStringSubmatch(l)
				if m == nil {
					t.Fatalf("line %q without a rank prefix kept as rank %d's", l, r)
				}
				if n, err := strconv.Atoi(m[1]); err != nil || n != r {
					t.Fatalf("line %q kept as rank %d's", l, r)
				}
			}
		}
		if n := len(a.failure()); n > len(out)+100*(len(a.ranks)+1) {
			t.Fatalf("failure text of %d bytes for %d bytes of output", n, len(out))
		}
	})
}
