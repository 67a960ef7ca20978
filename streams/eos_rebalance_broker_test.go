package streams_test

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/streams"
)

// TestExactlyOnceCountsOnceAcrossTheFirstRebalance: two exactly-once
// instances of a counting App start together while the input is written,
// so the first takes every partition, processes, and has its transaction
// aborted by the rebalance that gives half of them to the second. Every
// key's counts must then run 1..n once: records polled before the abort's
// rewind to the committed offsets were once processed too, counting them
// twice (a regression seen 1 run in ~7 before the fix). Three rounds, each
// with its own application and topics, to meet the abort more often.
func TestExactlyOnceCountsOnceAcrossTheFirstRebalance(t *testing.T) {
	b := startBroker(t)
	const n, users = 2000, 20
	for round := range 3 {
		in, out, app := fmt.Sprintf("clicks-%d", round), fmt.Sprintf("counts-%d", round), fmt.Sprintf("eos-%d", round)
		createTopic(t, b.Addr, in, 4)
		for _, id := range []string{"a", "b"} {
			top := streams.NewTopology()
			streams.From(top, streams.String, streams.String, []string{in}).
				GroupByKey(streams.String, streams.String).Count(streams.Named("per-user")).
				ToStream().To(out, streams.String, streams.Int64)
			a, err := streams.NewApp(top, streams.Brokers(b.Addr), streams.ApplicationID(app), streams.InstanceID(id),
				streams.StateDir(t.TempDir()), streams.WithGuarantee(streams.ExactlyOnceV2),
				streams.ClientOpts(kgo.SessionTimeout(3*time.Second), kgo.HeartbeatInterval(300*time.Millisecond)))
			if err != nil {
				t.Fatal(err)
			}
			runApp(t, a)
		}
		waitMembers(t, b.Addr, app, 2) // joined, not necessarily assigned yet
		if err := produceEach(b.Addr, 0, n, func(i int) *kgo.Record {
			return &kgo.Record{Topic: in, Key: fmt.Appendf(nil, "user%d", i%users), Value: []byte("click")}
		}); err != nil {
			t.Fatal(err)
		}
		seen := map[string]map[int64]bool{}
		readAllRecords(t, b.Addr, out, n, func(r *kgo.Record) {
			k, c := string(r.Key), int64(binary.BigEndian.Uint64(r.Value))
			if seen[k] == nil {
				seen[k] = map[int64]bool{}
			}
			if seen[k][c] || c < 1 || c > n/users {
				t.Errorf("round %d: %s counted %d (again, or out of 1..%d): a record counted twice", round, k, c, n/users)
			}
			seen[k][c] = true
		})
		for u := range users {
			if k := fmt.Sprintf("user%d", u); len(seen[k]) != n/users {
				t.Errorf("round %d: %s has %d distinct counts, want %d", round, k, len(seen[k]), n/users)
			}
		}
	}
}
