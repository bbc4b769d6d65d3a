// Command ontime-wait is what EarlyStart pods run (ontime's image holds it
// at /ontime-wait beside /ontime): it waits until a run's time, then exits
// or becomes the run's command (internal/earlywait). It is built from the
// standard library only, so that the pods copy and start about 2 MB, not
// the whole ontime binary.
//
//	ontime-wait --until 2026-11-24T10:00:00Z
//	ontime-wait --until 2026-11-24T10:00:00Z --install /.ontime-wait/ontime-wait
//	ontime-wait --until 2026-11-24T10:00:00Z -- /app/report --daily
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ontime-dev/ontime/internal/earlywait"
)

func main() {
	// The kubelet stops a waiting container with SIGTERM: end the wait.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := earlywait.Run(ctx, os.Args[1:], os.Stdout, os.Stderr, time.Now)
	stop()
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "ontime-wait:", err)
	if errors.As(err, new(earlywait.UsageError)) {
		os.Exit(2)
	}
	os.Exit(1)
}
