package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times (100 on
// every Linux architecture Go supports).
const clockTicks = 100

// rankStates describes, from /proc, each rank process (RANK in its
// environment) of process group pgid as the runner stops it: running (a
// rank busy computing, or spinning) or waiting (sleeping, e.g. in a
// receive), with its CPU time; "" when none is found.
func rankStates(pgid int) string {
	entries, _ := os.ReadDir("/proc")
	type state struct {
		rank int
		text string
	}
	var states []state
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == pgid { // the leader is torchrun
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name is in parentheses and may hold anything: the
		// fields follow its last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:])) // state ppid pgrp session ... utime(12) stime(13)
		if len(f) < 13 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		rank := -1
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, []byte("RANK=")); ok {
				rank, _ = strconv.Atoi(string(v))
			}
		}
		if rank < 0 {
			continue
		}
		utime, _ := strconv.ParseFloat(f[11], 64)
		stime, _ := strconv.ParseFloat(f[12], 64)
		what := "waiting"
		switch f[0] {
		case "R":
			what = "running"
		case "D":
			what = "in uninterruptible I/O"
		case "Z":
			what = "exited (not yet reaped)"
		}
		states = append(states, state{rank, fmt.Sprintf("rank %d (pid %d) was %s, %.1f s CPU", rank, pid, what, (utime+stime)/clockTicks)})
	}
	sort.Slice(states, func(i, j int) bool { return states[i].rank < states[j].rank })
	lines := make([]string, len(states))
	for i, s := range states {
		lines[i] = s.text
	}
	return strings.Join(lines, "\n")
}
