package streams_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/streams"
)

// TestPatternSourceSkipsOwnOutputs: a pattern source that matches the
// topology's own sink, dead-letter and repartition topics does not read
// them back (no feedback loop).
func TestPatternSourceSkipsOwnOutputs(t *testing.T) {
	top := streams.NewTopology()
	in := streams.FromRegex(top, streams.String, streams.String, `^ev-`)
	streams.MapValues(in, func(_ string, v string) (string, error) {
		if v == "bad" {
			return "", errors.New("bad value")
		}
		return v + "!", nil
	}).To("ev-out", streams.String, streams.String)
	d, err := streams.NewTestDriver(top, streams.ApplicationID("ev"),
		streams.OnError(streams.ErrorDeadLetter), streams.DeadLetterTopic("ev-dlq"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"a", "bad"} {
		if err := streams.PipeInput(d, "ev-in", streams.String, streams.String, "k", v); err != nil {
			t.Fatal(err)
		}
	}
	out, dlq := d.Output("ev-out"), d.Output("ev-dlq")
	if len(out) != 1 || string(out[0].Value) != "a!" || len(dlq) != 1 {
		t.Fatalf("first pass: out %d, dlq %d records", len(out), len(dlq))
	}
	// Feed the outputs back as if the consumer had matched them.
	for _, r := range []*kgo.Record{out[0], dlq[0]} {
		if err := d.Pipe(&kgo.Record{Topic: r.Topic, Key: r.Key, Value: r.Value}); err != nil {
			t.Fatal(err)
		}
	}
	if out, dlq := d.Output("ev-out"), d.Output("ev-dlq"); len(out) != 0 || len(dlq) != 0 {
		t.Fatalf("own outputs were processed again: out %d, dlq %d records", len(out), len(dlq))
	}
	// A topic the topology does not write still matches.
	if err := streams.PipeInput(d, "ev-other", streams.String, streams.String, "k", "b"); err != nil {
		t.Fatal(err)
	}
	if out := d.Output("ev-out"); len(out) != 1 || string(out[0].Value) != "b!" {
		t.Fatalf("ev-other: %d outputs", len(out))
	}
}

// TestFailedCounter: the "fail" outcome is its own counter, not derived
// from the others.
func TestFailedCounter(t *testing.T) {
	top := streams.NewTopology()
	streams.MapValues(streams.From(top, streams.String, streams.String, []string{"in"}),
		func(_ string, v string) (string, error) { return "", errors.New("no") }).
		To("out", streams.String, streams.String)
	d, err := streams.NewTestDriver(top)
	if err != nil {
		t.Fatal(err)
	}
	if err := streams.PipeInput(d, "in", streams.String, streams.String, "k", "v"); !errors.Is(err, streams.ErrProcessing) {
		t.Fatalf("Pipe = %v, want ErrProcessing", err)
	}
	if s := d.Stats(); s.Failed != 1 || s.Errors != 1 || s.Skipped != 0 || s.DeadLettered != 0 {
		t.Fatalf("stats %+v, want Failed 1, Errors 1", s)
	}
}

// TestCommitIntervalShorterThanTransactionTimeout: under exactly-once a
// transaction must end before the broker times it out.
func TestCommitIntervalShorterThanTransactionTimeout(t *testing.T) {
	build := func(opts ...streams.Opt) error {
		top := streams.NewTopology()
		streams.From(top, streams.String, streams.String, []string{"in"}).To("out", streams.String, streams.String)
		_, err := streams.NewApp(top, append([]streams.Opt{streams.Brokers("127.0.0.1:1"), streams.ApplicationID("x")}, opts...)...)
		return err
	}
	if err := build(streams.WithGuarantee(streams.ExactlyOnceV2), streams.CommitInterval(10*time.Second)); !errors.Is(err, streams.ErrConfig) {
		t.Fatalf("commit interval = default transaction timeout: %v, want ErrConfig", err)
	}
	if err := build(streams.WithGuarantee(streams.ExactlyOnceV2), streams.CommitInterval(time.Second), streams.TransactionTimeout(500*time.Millisecond)); !errors.Is(err, streams.ErrConfig) {
		t.Fatalf("commit interval > transaction timeout: %v, want ErrConfig", err)
	}
	if err := build(streams.WithGuarantee(streams.ExactlyOnceV2), streams.CommitInterval(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := build(streams.CommitInterval(30 * time.Second)); err != nil {
		t.Fatalf("at-least-once has no transaction timeout: %v", err)
	}
}

// TestExactlyOncePermanentProduceErrorStops: an output too large for any
// batch (MESSAGE_TOO_LARGE) cannot succeed on retry; Run returns it instead
// of aborting and reprocessing forever.
func TestExactlyOncePermanentProduceErrorStops(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "huge-in", 1)
	produceNumbers(t, b.Addr, "huge-in", 0, 3)
	top := streams.NewTopology()
	streams.MapValues(streams.From(top, streams.String, streams.String, []string{"huge-in"}),
		func(_ string, v string) (string, error) { return strings.Repeat("x", 2<<20), nil }).
		To("huge-out", streams.String, streams.String)
	app, err := streams.NewApp(top, streams.Brokers(b.Addr), streams.ApplicationID("huge"),
		streams.WithGuarantee(streams.ExactlyOnceV2))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = app.Run(ctx)
	if ctx.Err() != nil || !errors.Is(err, streams.ErrProduce) || !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("Run = %v (ctx %v), want ErrProduce wrapping MESSAGE_TOO_LARGE before the deadline", err, ctx.Err())
	}
	if s := app.Stats(); s.Aborted == 0 {
		t.Fatalf("stats %+v: the transaction was not aborted", s)
	}
}

// TestRunWithRestarts: an App that fails is run again with growing,
// capped delays, the restarts counted, until ctx is done.
func TestRunWithRestarts(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "restart-in", 1)
	produceNumbers(t, b.Addr, "restart-in", 0, 1)
	top := streams.NewTopology()
	streams.MapValues(streams.From(top, streams.String, streams.String, []string{"restart-in"}),
		func(_ string, v string) (string, error) { return "", errors.New("always fails") }).
		To("restart-out", streams.String, streams.String)
	app, err := streams.NewApp(top, streams.Brokers(b.Addr), streams.ApplicationID("restarter"),
		streams.ClientOpts(kgo.SessionTimeout(time.Second), kgo.HeartbeatInterval(200*time.Millisecond)))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		delays []time.Duration
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- app.RunWithRestarts(ctx, 20*time.Millisecond, 80*time.Millisecond, func(err error, d time.Duration) {
			if !errors.Is(err, streams.ErrProcessing) {
				t.Errorf("run error %v, want ErrProcessing", err)
			}
			mu.Lock()
			delays = append(delays, d)
			mu.Unlock()
		})
	}()
	deadline := time.Now().Add(30 * time.Second)
	for app.Stats().Restarts < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v after 30s, want 4 restarts", app.Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	found := false
	for _, s := range streams.Running() {
		if s.Job == "restarter" && s.Restarts >= 4 {
			found = true
		}
	}
	if !found {
		t.Errorf("Running() = %+v, want restarter with its restarts", streams.Running())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("RunWithRestarts = %v after cancel, want nil", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("RunWithRestarts did not return after cancel")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(delays) < 4 || delays[0] != 20*time.Millisecond || delays[1] != 40*time.Millisecond || delays[2] != 80*time.Millisecond || delays[3] != 80*time.Millisecond {
		t.Fatalf("delays %v, want 20ms 40ms 80ms 80ms …", delays)
	}
}

// TestPatternSubscriptionExcludesOwnOutput: over a broker, a pattern that
// matches the job's own (existing) output topic neither subscribes to it
// nor processes its records.
func TestPatternSubscriptionExcludesOwnOutput(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "loop-in", 1)
	createTopic(t, b.Addr, "loop-out", 1)
	produceNumbers(t, b.Addr, "loop-in", 0, 10)
	top := streams.NewTopology()
	streams.MapValues(streams.FromRegex(top, streams.String, streams.String, `^loop-`),
		func(_ string, v string) (string, error) { return v + "!", nil }).
		To("loop-out", streams.String, streams.String)
	app, err := streams.NewApp(top, streams.Brokers(b.Addr), streams.ApplicationID("looper"),
		streams.CommitInterval(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	want := map[string]bool{}
	for i := 0; i < 10; i++ {
		want[string(rune('0'+i))+"!"] = true
	}
	readAll(t, b.Addr, "loop-out", 30*time.Second, false, hasAll(want))
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := app.Stats(); s.RecordsIn != 10 {
		t.Fatalf("stats %+v, want 10 records in (its own output read back?)", s)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	octx, ocancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ocancel()
	offsets, err := kadm.NewClient(cl).FetchOffsets(octx, "looper")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offsets.Lookup("loop-in", 0); !ok || o.At != 10 {
		t.Fatalf("loop-in committed %+v, want 10", o)
	}
	if o, ok := offsets.Lookup("loop-out", 0); ok {
		t.Fatalf("the group consumed its own output topic: %+v", o)
	}
}

// TestExactlyOnceInvalidTopicStops: ToTopicFunc naming a topic that cannot
// exist is a permanent produce failure, returned by Run.
func TestExactlyOnceInvalidTopicStops(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "badtopic-in", 1)
	produceNumbers(t, b.Addr, "badtopic-in", 0, 3)
	top := streams.NewTopology()
	streams.From(top, streams.String, streams.String, []string{"badtopic-in"}).
		ToTopicFunc(func(streams.Record[string, string]) (string, error) { return "no such/topic!", nil }, streams.String, streams.String)
	app, err := streams.NewApp(top, streams.Brokers(b.Addr), streams.ApplicationID("badtopic"),
		streams.WithGuarantee(streams.ExactlyOnceV2))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	err = app.Run(ctx)
	t.Logf("Run after %v: %v", time.Since(start), err)
	if ctx.Err() != nil || !errors.Is(err, streams.ErrProduce) {
		t.Fatalf("Run = %v (ctx %v), want ErrProduce before the deadline", err, ctx.Err())
	}
}
