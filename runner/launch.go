package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// tailLines is how many of each rank's last output lines a failure shows.
const tailLines = 15

// launch runs nproc ranks of worker.py in dir under torchrun, streaming
// their output to log; on failure the error holds the failing ranks' last lines.
func launch(ctx context.Context, python, dir string, nproc int, log io.Writer) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, python, "-m", "torch.distributed.run", "--nnodes=1",
		"--nproc_per_node="+strconv.Itoa(nproc), "--master_addr=127.0.0.1", "--master_port="+strconv.Itoa(port),
		// torch 1.13 on Python >= 3.11 cannot parse its default "0" for these
		// two flags (Std.from_str returns None); "1" (stdout) parses everywhere,
		// and stderr, where the workers write, stays on the console.
		"--redirects=1", "--tee=1", "--log_dir=logs",
		"worker.py", "--config", "run.json")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1", "PYTHONUNBUFFERED=1")
	ownProcessGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	out := newTails(log)
	cmd.Stdout, cmd.Stderr = out, out // the same writer: exec serializes the writes
	err = cmd.Run()
	out.flush()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("workers stopped: %v (the process group was killed)%s", ctx.Err(), out.failure())
	}
	return fmt.Errorf("worker failed (torchrun: %v)%s", err, out.failure())
}

// freePort asks the kernel for a free TCP port on the loopback interface.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("master port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// rankPrefix matches the "[rank N] " prefix worker.py puts on its lines.
var rankPrefix = regexp.MustCompile(`^\[rank (\d+)\] `)

// tails forwards output lines to log, prefixing torchrun's own lines, and
// keeps the last lines of each rank.
type tails struct {
	log     io.Writer
	partial []byte
	ranks   map[int][]string
	runner  []string // torchrun's own lines
}

func newTails(log io.Writer) *tails { return &tails{log: log, ranks: map[int][]string{}} }

// Write splits p into lines.
func (t *tails) Write(p []byte) (int, error) {
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		t.line(string(t.partial[:i]))
		t.partial = t.partial[i+1:]
	}
}

func (t *tails) flush() {
	if len(t.partial) > 0 {
		t.line(string(t.partial))
		t.partial = nil
	}
}

func (t *tails) line(s string) {
	if m := rankPrefix.FindStringSubmatch(s); m != nil {
		r, _ := strconv.Atoi(m[1])
		t.ranks[r] = keepLast(append(t.ranks[r], s), tailLines)
		fmt.Fprintln(t.log, s)
		return
	}
	t.runner = keepLast(append(t.runner, s), tailLines)
	fmt.Fprintln(t.log, "[torchrun] "+s)
}

func keepLast(s []string, n int) []string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// failure describes the failing ranks (those that printed an error), or
// torchrun's last lines when no rank did.
func (t *tails) failure() string {
	var b strings.Builder
	ids := make([]int, 0, len(t.ranks))
	for r := range t.ranks {
		ids = append(ids, r)
	}
	sort.Ints(ids)
	for _, r := range ids {
		text := strings.Join(t.ranks[r], "\n")
		if strings.Contains(text, "Error") || strings.Contains(text, "Traceback") {
			fmt.Fprintf(&b, "\nrank %d's last stderr lines:\n%s", r, text)
		}
	}
	if b.Len() == 0 && len(t.runner) > 0 {
		fmt.Fprintf(&b, "\ntorchrun's last lines:\n%s", strings.Join(t.runner, "\n"))
	}
	return b.String()
}
