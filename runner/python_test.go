package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakePython writes an executable shell script standing in for a python.
func fakePython(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFindPythonPicksFirstWithTorch(t *testing.T) {
	dir := t.TempDir()
	noTorch := fakePython(t, dir, "pyenv-python3", `echo "ModuleNotFoundError: No module named 'torch'" >&2; exit 1`)
	withTorch := fakePython(t, dir, "debian-python3", `exit 0`)
	alsoTorch := fakePython(t, dir, "later-python3", `exit 0`)
	missing := filepath.Join(dir, "absent")
	got, err := findPython(context.Background(), []string{missing, noTorch, withTorch, alsoTorch}, importsTorch)
	if err != nil {
		t.Fatal(err)
	}
	if got != withTorch {
		t.Errorf("found %s, want %s (the first that imports torch)", got, withTorch)
	}
	_, err = findPython(context.Background(), []string{missing, noTorch}, importsTorch)
	if err == nil {
		t.Fatal("no candidate imports torch, yet one was found")
	}
	for _, want := range []string{missing + ": not found", noTorch + ": cannot import torch", "No module named 'torch'", "python3-torch", "--python"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

// TestFindPythonSaysTimeout: a probe cut short by --timeout says so.
func TestFindPythonSaysTimeout(t *testing.T) {
	dir := t.TempDir()
	py := fakePython(t, dir, "python3", `exit 0`)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("--timeout 1s elapsed"))
	_, err := findPython(ctx, []string{py, py}, importsTorch)
	if err == nil || err.Error() != "--timeout 1s elapsed while probing "+py+" for torch" {
		t.Errorf("got %v", err)
	}
}

// TestLimitsBeforeProbe: a plan over --max-procs is refused before any
// python runs (the fake one would leave a mark).
func TestLimitsBeforeProbe(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "probed")
	py := fakePython(t, dir, "python3", "touch "+mark)
	var stdout, stderr bytes.Buffer
	for plan, want := range map[string]string{
		"tiny-transformer.json": "plan needs 4 rank processes (2 stages × 2 replicas × tp 1 × cp 1), over --max-procs 2",
		// 1F1B-RR replicates each stage on its own (2 + 1 ranks), runConfig.Replicas is 1.
		"tiny-1f1b-rr.json": "plan needs 3 rank processes (2 stages with 2 + 1 replicas × tp 1 × cp 1), over --max-procs 2",
	} {
		err := run(context.Background(), []string{"--python", py, "--max-procs", "2", filepath.Join("testdata", plan)}, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: got %v, want %q", plan, err, want)
		}
	}
	if _, err := os.Stat(mark); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("python was started before the limit check (%v)", err)
	}
}
