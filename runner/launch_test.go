package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestTailsNamesFailingRank(t *testing.T) {
	var log bytes.Buffer
	tl := newTails(&log)
	for _, chunk := range []string{"[rank 0] step 1\n[rank 1] Trace", "back (most recent call last):\n",
		"[rank 1] ValueError: bad\nelastic agent says hi\n[rank 0] waiting"} {
		if _, err := tl.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	tl.flush()
	if want := "[rank 0] step 1\n[rank 1] Traceback (most recent call last):\n[rank 1] ValueError: bad\n[torchrun] elastic agent says hi\n[rank 0] waiting\n"; log.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", log.String(), want)
	}
	got := tl.failure()
	if !strings.Contains(got, "rank 1 failed; its last stderr lines:\n[rank 1] Traceback") || strings.Contains(got, "rank 0") {
		t.Errorf("failure names the wrong ranks:\n%s", got)
	}
}

// TestLaunchKillsProcessGroupOnTimeout runs a fake torchrun whose child
// sleeps; the deadline must stop both and say so.
func TestLaunchKillsProcessGroupOnTimeout(t *testing.T) {
	dir := t.TempDir()
	py := fakePython(t, dir, "python3", `echo started >&2; sleep 60 & wait`)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var log bytes.Buffer
	err := runTorchrun(ctx, py, dir, singleNode(2), &log)
	if err == nil || !strings.Contains(err.Error(), "workers stopped: context deadline exceeded (the process group was killed)") {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(err.Error(), "torchrun's last lines:\nstarted") {
		t.Errorf("error lacks the launcher's output: %v", err)
	}
}

func TestLaunchReportsExitStatus(t *testing.T) {
	dir := t.TempDir()
	py := fakePython(t, dir, "python3", `echo "[rank 1] RuntimeError: boom" >&2; exit 3`)
	err := runTorchrun(context.Background(), py, dir, singleNode(2), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "worker failed (torchrun: exit status 3)\nrank 1 failed; its last stderr lines:\n[rank 1] RuntimeError: boom") {
		t.Fatalf("got %v", err)
	}
}
