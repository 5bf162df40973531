package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// signalError is the cancellation cause when the runner receives a signal.
type signalError struct{ sig os.Signal }

func (e signalError) Error() string { return fmt.Sprintf("received %v", e.sig) }

// exitCode is the shell's code for a process ended by the signal (128+n).
func (e signalError) exitCode() int {
	if s, ok := e.sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

// withSignals returns a context cancelled, with a signalError cause, on
// the first SIGINT or SIGTERM; later ones are absorbed, so the runner
// finishes stopping the workers. stop releases the handler.
func withSignals(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			cancel(signalError{s})
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		cancel(nil)
	}
}
