package main

import (
	"context"
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
