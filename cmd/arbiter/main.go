// Command arbiter runs LLM-driven worlds tick by tick.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/arbiter-sim/arbiter/session"
)

func main() { os.Exit(runMain(os.Args[1:])) }

// runMain runs arbiter as a process: Ctrl-C (or SIGTERM) cancels the context,
// which stops a run between ticks or rolls back the tick in flight; a
// second one ends the process at once, whatever it is doing. The process's
// memory limit follows its largest live heap (session.GovernMemory).
func runMain(args []string) int {
	defer session.GovernMemory()()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // the next signal takes its default action: the process ends
	}()
	return Execute(ctx, SystemStreams(), args)
}
