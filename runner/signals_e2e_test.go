//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runnerMainEnv makes the test binary run the runner's main (see TestMain),
// so a test can signal a real runner process.
const runnerMainEnv = "PIPEPLAN_RUNNER_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runnerMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// procInfo is one process of /proc.
type procInfo struct {
	pid     int
	cwd     string
	cmdline string
	environ string
}

// processesUnder lists the processes whose working directory lies under
// dir: torchrun and the workers run in the run directory, whoever their
// parent is now (an orphan reparented to init included).
func processesUnder(dir string) []procInfo {
	entries, _ := os.ReadDir("/proc")
	var out []procInfo
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		base := filepath.Join("/proc", e.Name())
		cwd, err := os.Readlink(filepath.Join(base, "cwd"))
		if err != nil || !strings.HasPrefix(cwd, dir) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(base, "cmdline"))
		env, _ := os.ReadFile(filepath.Join(base, "environ"))
		out = append(out, procInfo{pid: pid, cwd: cwd,
			cmdline: strings.ReplaceAll(string(cmd), "\x00", " "), environ: string(env)})
	}
	return out
}

// workersUnder are the rank processes (worker.py --config, not torchrun) under dir.
func workersUnder(dir string) []procInfo {
	var out []procInfo
	for _, p := range processesUnder(dir) {
		if strings.Contains(p.cmdline, "worker.py --config") && !strings.Contains(p.cmdline, "torch.distributed.run") {
			out = append(out, p)
		}
	}
	return out
}

// waitForWorkers polls /proc until n rank processes run under dir, or
// fails after a generous deadline (a loaded 2-core machine starts torch
// slowly); done reports an early end of what should have started them.
func waitForWorkers(t *testing.T, dir string, n int, done <-chan struct{}) []procInfo {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for time.Now().Before(deadline) {
		if w := workersUnder(dir); len(w) >= n {
			return w
		}
		select {
		case <-done:
			t.Fatalf("the run ended before %d workers were seen", n)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("%d workers did not start under %s", n, dir)
	return nil
}

// TestEndToEndSignalStopsRealRun starts a real runner process on a long
// scaled-down run, waits for its two torch workers and signals the runner:
// it exits with 128 + the signal, no process is left in the run directory
// (torchrun, workers or orphans, whoever their parent), and the run
// directory is gone unless --keep.
func TestEndToEndSignalStopsRealRun(t *testing.T) {
	torchPython(t)
	t.Parallel() // each a runner and torchrun job of its own
	for _, tc := range []struct {
		sig  syscall.Signal
		keep bool
	}{{syscall.SIGINT, false}, {syscall.SIGTERM, true}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			args := []string{"--scale-down", "--steps", "100000", "--timeout", "10m", "testdata/tiny-profile.json"}
			if tc.keep {
				args = append([]string{"--keep"}, args...)
			}
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), runnerMainEnv+"=1", "TMPDIR="+tmp)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			var waitErr error
			go func() { waitErr = cmd.Wait(); close(done) }()
			workers := waitForWorkers(t, tmp, 2, done)
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			<-done
			var exit *exec.ExitError
			if !errors.As(waitErr, &exit) || exit.ExitCode() != 128+int(tc.sig) {
				t.Fatalf("runner exited with %v, want code %d\n%s", waitErr, 128+int(tc.sig), stderr.String())
			}
			if !strings.Contains(stderr.String(), "runner: stopped: workers stopped: received "+tc.sig.String()) {
				t.Errorf("stderr does not say why it stopped:\n%s", stderr.String())
			}
			if left := processesUnder(tmp); len(left) > 0 {
				t.Errorf("processes survived the runner: %+v", left)
			}
			for _, w := range workers {
				if err := syscall.Kill(w.pid, 0); !errors.Is(err, syscall.ESRCH) {
					t.Errorf("worker %d survived (kill 0: %v)", w.pid, err)
				}
			}
			runs, _ := filepath.Glob(filepath.Join(tmp, "pipeplan-run-*"))
			if tc.keep != (len(runs) == 1) {
				t.Errorf("--keep %v, run directories left: %v", tc.keep, runs)
			}
		})
	}
}

// TestEndToEndRankKilledBySignal kills one real rank with SIGKILL during a
// run: the error names that rank and the signal (from torchrun's summary).
func TestEndToEndRankKilledBySignal(t *testing.T) {
	py := torchPython(t)
	t.Parallel() // a torchrun job of its own
	c, err := newRunConfig(loadPlan(t, "tiny-profile.json"), options{device: "cpu", scaleDown: true, steps: 100000, warmup: 0})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c.OutDir = dir
	if err := writeRunDir(dir, c); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	done := make(chan struct{})
	var launchErr error
	go func() { launchErr = runTorchrun(ctx, py, dir, singleNode(len(c.Ranks)), &bytes.Buffer{}); close(done) }()
	killed := false
	for _, w := range waitForWorkers(t, dir, 2, done) {
		if strings.Contains("\x00"+w.environ, "\x00RANK=1\x00") {
			killed = syscall.Kill(w.pid, syscall.SIGKILL) == nil
		}
	}
	if !killed {
		cancel()
		<-done
		t.Fatal("rank 1's process was not found (RANK=1 in its environment)")
	}
	<-done
	if launchErr == nil || !strings.Contains(launchErr.Error(), "rank 1 was killed by signal 9 (killed)") {
		t.Fatalf("error does not name rank 1 and SIGKILL: %v", launchErr)
	}
	if ctx.Err() != nil {
		t.Fatalf("the run had to be stopped by the deadline: %v", launchErr)
	}
}
