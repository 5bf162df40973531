// Package cli holds pipeplan's command-line commands. Each command lives in
// its own file, registers itself in init, parses its flags and calls the
// application layer (pipeplan/app) or the core; Run dispatches to them.
//
// Usage:
//
//	pipeplan [command] [flags]
//
// With no command it serves the playground (same as "pipeplan serve").
package cli

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// command is one CLI subcommand.
type command struct {
	// summary is the one-line description shown by "pipeplan help".
	summary string
	// run executes the command with its arguments (after the command name),
	// writing results to stdout. It returns an error for bad input.
	run func(args []string, stdout io.Writer) error
}

// commands maps a command name (or "gavel allocate" style two-word name) to
// its implementation. Each command's file adds itself in init.
var commands = map[string]command{}

// register adds a command; it panics on a duplicate name, a programming error.
func register(name string, c command) {
	if _, dup := commands[name]; dup {
		panic("pipeplan: duplicate command " + name)
	}
	commands[name] = c
}

// Run runs the command named by the first one or two arguments, writing its
// results to stdout; no argument serves the playground.
func Run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		args = []string{"serve"}
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return nil
	}
	if len(args) >= 2 {
		if c, ok := commands[args[0]+" "+args[1]]; ok {
			return c.run(args[2:], stdout)
		}
	}
	if c, ok := commands[args[0]]; ok {
		return c.run(args[1:], stdout)
	}
	usage(os.Stderr)
	return fmt.Errorf("unknown command %q", args[0])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: pipeplan <command> [flags]   (no command: serve the playground)")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-18s %s\n", n, commands[n].summary)
	}
}
