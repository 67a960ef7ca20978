// Package benchrun holds what the streams benchmarks share: running an App
// over pre-loaded input to completion and timing it.
package benchrun

import (
	"context"
	"testing"
	"time"

	"github.com/strata-streaming/strata/streams"
)

// ToCompletion runs app until it has processed n input records, then stops
// it (Run commits what it processed before returning) and returns the time
// from start to stop. It fails b if the App ends early or processed another
// number of records.
func ToCompletion(b testing.TB, app *streams.App, n uint64) time.Duration {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- app.Run(ctx) }()
	for app.Stats().RecordsIn < n {
		select {
		case err := <-done:
			b.Fatalf("app ended early: %v", err)
		case <-time.After(2 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	if got := app.Stats().RecordsIn; got != n {
		b.Fatalf("processed %d records, want %d", got, n)
	}
	return took
}
