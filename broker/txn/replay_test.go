package txn

import (
	"reflect"
	"testing"
	"time"
)

// persisted clears what Kafka does not write to __transaction_state.
func persisted(s Snapshot) Snapshot {
	s.LastProducerID, s.LastProducerEpoch = -1, -1
	return s
}

func TestReplayRebuildsState(t *testing.T) {
	for _, version := range []int16{0, 1} {
		t.Run(map[int16]string{0: "value v0", 1: "value v1"}[version], func(t *testing.T) {
			s := newScenario(t)
			s.cfg.LogValueVersion = version
			s.cfg.IDExpiration = time.Hour

			// committed: a full commit, then a new transaction Ongoing.
			pid, e := s.mustInit("committed")
			s.add("committed", pid, e, tpA0, tpB0)
			s.end("committed", pid, e, true)
			s.completeAll()
			s.add("committed", pid, e, tpA1)
			// preparing: decided, markers not yet durable.
			pid, e = s.mustInit("preparing")
			s.add("preparing", pid, e, tpA0)
			s.end("preparing", pid, e, true)
			pending := s.takeMarkers()
			// fenced: aborted by a new producer's InitProducerId.
			pid, e = s.mustInit("fenced")
			s.add("fenced", pid, e, tpB0)
			s.init("fenced", -1, -1)
			s.completeAll()
			// expired: removed with a tombstone.
			s.mustInit("expired")
			s.advance(30 * time.Minute)
			// timedout: aborted by Tick, its epoch bumped.
			pid, e = s.mustInit("timedout")
			s.add("timedout", pid, e, tpA0)
			s.advance(31 * time.Minute)
			s.completeAll()
			s.mustInit("empty")
			if _, ok := s.c.State("expired"); ok {
				t.Fatal("setup: expired not expired")
			}

			loaded := New(&s.cfg, testCoordEpoch+1)
			for _, r := range s.records {
				k, v := EncodeRecord(r)
				if got := int16(-1); v != nil {
					got = int16(v[0])<<8 | int16(v[1])
					if got != version {
						t.Fatalf("value version %d, want %d", got, version)
					}
				}
				dec, err := DecodeRecord(k, v)
				if err != nil {
					t.Fatalf("decode %+v: %v", r, err)
				}
				if err := loaded.Replay(dec); err != nil {
					t.Fatal(err)
				}
			}
			if !reflect.DeepEqual(loaded.IDs(), s.c.IDs()) {
				t.Fatalf("ids %v, want %v", loaded.IDs(), s.c.IDs())
			}
			for _, id := range s.c.IDs() {
				want := persisted(s.state(id))
				got, _ := loaded.State(id)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: replayed %+v\nwant %+v", id, got, want)
				}
			}
			// The new coordinator resends the markers of the decided transaction.
			resend := loaded.PendingMarkers()
			pending[0].CoordinatorEpoch = testCoordEpoch + 1
			if !reflect.DeepEqual(resend, pending) {
				t.Fatalf("pending markers %+v, want %+v", resend, pending)
			}
			err, eff := loaded.CompleteTxn(s.now, resend[0])
			if err != nil || len(eff.Records) != 1 {
				t.Fatalf("complete after reload: %v %+v", err, eff)
			}
			// Timers carry on from the persisted timestamps.
			if !loaded.NextDeadline().Equal(s.c.NextDeadline()) {
				t.Fatalf("deadline %v, want %v", loaded.NextDeadline(), s.c.NextDeadline())
			}
		})
	}
}

func TestReplayTombstoneAndDead(t *testing.T) {
	cfg := DefaultConfig()
	c := New(&cfg, 0)
	v := &Value{ProducerID: 1, ProducerEpoch: 2, TimeoutMs: 1000, State: Empty, StartTimestamp: -1}
	_ = c.Replay(Record{TransactionalID: "a", Value: v})
	_ = c.Replay(Record{TransactionalID: "b", Value: v})
	_ = c.Replay(Record{TransactionalID: "a"})
	dead := *v
	dead.State = Dead
	_ = c.Replay(Record{TransactionalID: "b", Value: &dead})
	if c.Len() != 0 {
		t.Fatalf("left %v", c.IDs())
	}
	bad := *v
	bad.State = 9
	if err := c.Replay(Record{TransactionalID: "c", Value: &bad}); err == nil {
		t.Fatal("replayed an unknown state")
	}
}
