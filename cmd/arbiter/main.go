// Command arbiter runs LLM-driven worlds tick by tick.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(Execute(ctx, SystemStreams(), os.Args[1:]))
}
