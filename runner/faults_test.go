//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLaunchStopsOnSignalWithoutOrphans: a fake torchrun starts a worker
// that ignores SIGINT and SIGTERM and reports both pids through a FIFO;
// the runner's signal is forwarded to the group, torchrun exits, and the
// orphaned worker is killed and reaped: neither pid exists afterwards.
func TestLaunchStopsOnSignalWithoutOrphans(t *testing.T) {
	cancel, done, fields := startFakeRun(t, `(trap '' INT TERM; exec sleep 600) &
echo "$$ $!" > ready
wait`, 2)
	cancel(signalError{syscall.SIGINT})
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "workers stopped: received interrupt (the process group was killed)") {
		t.Fatalf("got %v", err)
	}
	for _, f := range fields {
		pid, _ := strconv.Atoi(f)
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d survived the runner (kill 0: %v)", pid, err)
		}
	}
}

// startFakeRun launches a fake torchrun (body, a shell script run in its
// own directory) that writes n words (its pids) to the FIFO "ready"; it
// returns once they are written, with the launch's cancel and result.
func startFakeRun(t *testing.T, body string, n int) (context.CancelCauseFunc, <-chan error, []string) {
	t.Helper()
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	if err := syscall.Mkfifo(ready, 0o600); err != nil {
		t.Fatal(err)
	}
	py := fakePython(t, dir, "python3", body)
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() {
		err := runTorchrun(ctx, py, dir, singleNode(2), &bytes.Buffer{})
		// Unblock the reader below if the script never wrote.
		if f, ferr := os.OpenFile(ready, os.O_WRONLY|syscall.O_NONBLOCK, 0); ferr == nil {
			f.Close()
		}
		done <- err
	}()
	data, err := os.ReadFile(ready) // blocks until the fake torchrun has written
	fields := strings.Fields(string(data))
	if err != nil || len(fields) != n {
		t.Fatalf("fake torchrun did not report its pids: %q, %v (launch: %v)", data, err, <-done)
	}
	return cancel, done, fields
}

// TestLaunchNamesRankExitAndSignal: torchrun's failure summary gives the
// failed rank's exit code (negative: the signal); the error names them
// with the rank's last lines.
func TestLaunchNamesRankExitAndSignal(t *testing.T) {
	dir := t.TempDir()
	py := fakePython(t, dir, "python3", `cat >&2 <<'OUT'
[rank 0] step 1
[rank 1] step 1 started
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
Root Cause (first observed failure):
[0]:
  time      : 2026-11-24_10:00:00
  host      : localhost
  rank      : 1 (local_rank: 1)
  exitcode  : -9 (pid: 4242)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 4242
[1]:
  time      : 2026-11-24_10:00:00
  host      : localhost
  rank      : 0 (local_rank: 0)
  exitcode  : 3 (pid: 4241)
OUT
exit 1`)
	err := runTorchrun(context.Background(), py, dir, singleNode(2), &bytes.Buffer{})
	if err == nil {
		t.Fatal("a failed torchrun reported success")
	}
	for _, want := range []string{
		"rank 0 exited with code 3; its last stderr lines:\n[rank 0] step 1",
		"rank 1 was killed by signal 9 (killed); its last stderr lines:\n[rank 1] step 1 started",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err.Error())
		}
	}
}

// TestLaunchStopNamesRankStates: a fake torchrun starts rank 0 waiting
// (sleep) and rank 1 spinning; a run stopped from outside (as --timeout
// does), once rank 0 sleeps and rank 1 runs, says which rank was running
// and which waiting.
func TestLaunchStopNamesRankStates(t *testing.T) {
	cancel, done, pids := startFakeRun(t, `RANK=0 sleep 600 &
a=$!
RANK=1 sh -c 'while :; do :; done' &
echo "$a $!" > ready
wait`, 2)
	// Wait (polling /proc, generous deadline) until rank 0 sleeps with RANK
	// set and rank 1 spins with its own: on a loaded machine the forked
	// shell may not have exec'd (and taken RANK=1) when the pids are known.
	deadline := time.Now().Add(time.Minute)
	for states := ""; !strings.Contains(states, "rank 0 (pid "+pids[0]+") was waiting") || !strings.Contains(states, "rank 1 (pid "+pids[1]+") was running"); states = rankStates(pgidOf(t, pids[0])) {
		if time.Now().After(deadline) {
			t.Fatalf("rank 0 never slept while rank 1 ran: %q", states)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel(errors.New("--timeout 1s elapsed"))
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "workers stopped: --timeout 1s elapsed (the process group was killed)") {
		t.Fatalf("got %v", err)
	}
	for _, want := range []string{"\nwhen stopped:\nrank 0 (pid " + pids[0] + ") was waiting, ", "\nrank 1 (pid " + pids[1] + ") was running, "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err.Error())
		}
	}
}

// pgidOf is the process group of pid.
func pgidOf(t *testing.T, pid string) int {
	t.Helper()
	n, err := strconv.Atoi(pid)
	if err != nil {
		t.Fatal(err)
	}
	g, err := syscall.Getpgid(n)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
