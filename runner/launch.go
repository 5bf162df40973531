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
	"syscall"
	"time"
)

// tailLines is how many of each rank's last output lines a failure shows.
const tailLines = 15

// nodeSpec is this node's share of a run: one node of nnodes, each
// starting nproc ranks, meeting at a torchrun rendezvous when nnodes > 1.
type nodeSpec struct {
	nproc, nnodes, nodeRank int
	// rdzvBackend, rdzvEndpoint and rdzvID are torchrun's --rdzv_backend,
	// --rdzv_endpoint (host:port) and --rdzv_id; unused on one node.
	rdzvBackend, rdzvEndpoint, rdzvID string
}

// singleNode is a run of nproc ranks on this machine alone.
func singleNode(nproc int) nodeSpec { return nodeSpec{nproc: nproc, nnodes: 1} }

// launchArgs is torchrun's command line (after python) for this node: one
// node with a free loopback port as its master, or one node of a
// rendezvous. torch 1.13 and 2.x both accept the underscore spellings.
func launchArgs(n nodeSpec, port int) []string {
	args := []string{"-m", "torch.distributed.run", "--nproc_per_node=" + strconv.Itoa(n.nproc)}
	if n.nnodes <= 1 {
		args = append(args, "--nnodes=1", "--master_addr=127.0.0.1", "--master_port="+strconv.Itoa(port))
	} else {
		args = append(args, "--nnodes="+strconv.Itoa(n.nnodes), "--node_rank="+strconv.Itoa(n.nodeRank),
			"--rdzv_backend="+n.rdzvBackend, "--rdzv_endpoint="+n.rdzvEndpoint, "--rdzv_id="+n.rdzvID)
	}
	// torch 1.13 on Python >= 3.11 cannot parse its default "0" for these
	// two flags (Std.from_str returns None); "1" (stdout) parses everywhere,
	// and stderr, where the workers write, stays on the console.
	return append(args, "--redirects=1", "--tee=1", "--log_dir=logs", "worker.py", "--config", "run.json")
}

// runTorchrun runs this node's ranks of worker.py in dir under torchrun,
// streaming their output to log; on failure the error holds the failing
// ranks' last lines.
func runTorchrun(ctx context.Context, python, dir string, n nodeSpec, log io.Writer) error {
	port := 0
	if n.nnodes <= 1 {
		var err error
		if port, err = freePort(); err != nil {
			return err
		}
	}
	cmd := exec.CommandContext(ctx, python, launchArgs(n, port)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1", "PYTHONUNBUFFERED=1")
	var states string // the ranks' states when the run was stopped
	ownProcessGroup(ctx, cmd, func(pgid int) { states = rankStates(pgid) })
	cmd.WaitDelay = stopGrace
	out := newTails(log)
	cmd.Stdout, cmd.Stderr = out, out // the same writer: exec serializes the writes
	err := cmd.Run()
	killGroup(cmd)
	out.flush()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		if states != "" {
			states = "\nwhen stopped:\n" + states
		}
		return fmt.Errorf("workers stopped: %v (the process group was killed)%s%s", context.Cause(ctx), out.stopped(), states)
	}
	return fmt.Errorf("worker failed (torchrun: %v)%s", err, out.failure())
}

// stopGrace is how long torchrun and its workers get to stop after the
// runner forwards a signal, before they are killed.
const stopGrace = 5 * time.Second

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

// torchrun's failure summary (torch.distributed.elastic ChildFailedError)
// names each failed rank, then its exit code (-N: killed by signal N).
var (
	summaryRank     = regexp.MustCompile(`^\s*rank\s*: (\d+) \(local_rank: \d+\)`)
	summaryExitCode = regexp.MustCompile(`^\s*exitcode\s*: (-?\d+) \(pid: \d+\)`)
)

// tails forwards output lines to log, prefixing torchrun's own lines, and
// keeps the last lines of each rank.
type tails struct {
	log     io.Writer
	partial []byte
	ranks   map[int][]string
	runner  []string // torchrun's own lines
	// exits are the exit codes torchrun's failure summary gives, by rank.
	exits    map[int]int
	lastRank int // the rank of the summary entry being read, or -1
}

func newTails(log io.Writer) *tails {
	return &tails{log: log, ranks: map[int][]string{}, exits: map[int]int{}, lastRank: -1}
}

// maxLineBytes bounds a line kept: a longer one is cut into lines of this
// size, so output without newlines cannot grow the buffer without bound.
const maxLineBytes = 64 << 10

// Write splits p into lines.
func (t *tails) Write(p []byte) (int, error) {
	t.partial = append(t.partial, p...)
	for {
		switch i := bytes.IndexByte(t.partial, '\n'); {
		case i >= 0 && i <= maxLineBytes:
			t.line(string(t.partial[:i]))
			t.partial = t.partial[i+1:]
		case len(t.partial) > maxLineBytes:
			t.line(string(t.partial[:maxLineBytes]))
			t.partial = t.partial[maxLineBytes:]
		default:
			return len(p), nil
		}
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
		if r, err := strconv.Atoi(m[1]); err == nil { // not a rank when out of range
			t.ranks[r] = keepLast(append(t.ranks[r], s), tailLines)
			fmt.Fprintln(t.log, s)
			return
		}
	}
	if m := summaryRank.FindStringSubmatch(s); m != nil {
		t.lastRank, _ = strconv.Atoi(m[1])
	} else if m := summaryExitCode.FindStringSubmatch(s); m != nil && t.lastRank >= 0 {
		t.exits[t.lastRank], _ = strconv.Atoi(m[1])
		t.lastRank = -1
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

// failure describes the failing ranks: those torchrun's summary names,
// with their exit code or signal, and those that printed an error, with
// their last lines; or torchrun's last lines when no rank is known.
func (t *tails) failure() string {
	var b strings.Builder
	ids := make([]int, 0, len(t.ranks)+len(t.exits))
	for r := range t.ranks {
		ids = append(ids, r)
	}
	for r := range t.exits {
		if _, ok := t.ranks[r]; !ok {
			ids = append(ids, r)
		}
	}
	sort.Ints(ids)
	for _, r := range ids {
		text := strings.Join(t.ranks[r], "\n")
		code, failed := t.exits[r]
		if !failed && !strings.Contains(text, "Error") && !strings.Contains(text, "Traceback") {
			continue
		}
		switch {
		case !failed:
			fmt.Fprintf(&b, "\nrank %d failed", r)
		case code < 0:
			fmt.Fprintf(&b, "\nrank %d was killed by signal %d (%v)", r, -code, syscall.Signal(-code))
		default:
			fmt.Fprintf(&b, "\nrank %d exited with code %d", r, code)
		}
		if text == "" {
			b.WriteString(" and printed nothing")
			continue
		}
		fmt.Fprintf(&b, "; its last stderr lines:\n%s", text)
	}
	if b.Len() == 0 && len(t.runner) > 0 {
		fmt.Fprintf(&b, "\ntorchrun's last lines:\n%s", strings.Join(t.runner, "\n"))
	}
	return b.String()
}

// stopped describes a run stopped from outside (timeout or signal), when
// no rank failed on its own: each rank's last line shows where it was
// (a hung rank is the one behind), or torchrun's last lines.
func (t *tails) stopped() string {
	if len(t.exits) > 0 {
		return t.failure()
	}
	ids := make([]int, 0, len(t.ranks))
	for r := range t.ranks {
		ids = append(ids, r)
	}
	sort.Ints(ids)
	var b strings.Builder
	for _, r := range ids {
		lines := t.ranks[r]
		fmt.Fprintf(&b, "\nrank %d's last line: %s", r, lines[len(lines)-1])
	}
	if b.Len() == 0 && len(t.runner) > 0 {
		fmt.Fprintf(&b, "\ntorchrun's last lines:\n%s", strings.Join(t.runner, "\n"))
	}
	return b.String()
}
