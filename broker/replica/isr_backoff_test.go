package replica

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// openTestReplica opens a replica of node self in a temporary directory.
func openTestReplica(t *testing.T, self int32) *Replica {
	t.Helper()
	r, err := Open(t.TempDir(), Options{NodeID: self, Storage: storage.DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestISRProposalBacksOffAfterRejection: a follower the quorum refuses to
// add (a fenced broker, say) keeps fetching; after a rejected proposal the
// leader waits before proposing it again, doubling the wait per failure,
// instead of proposing on every fetch (one node once logged the same
// rejection 3,400 times in ten seconds). A new role starts afresh.
func TestISRProposalBacksOffAfterRejection(t *testing.T) {
	const self, follower = 1, 2
	p := openTestReplica(t, self)
	role := &Role{Leader: self, LeaderEpoch: 1, PartitionEpoch: 7, Replicas: []int32{self, follower}, ISR: []int32{self}}
	p.SetRole(role, time.Now().UnixMilli())
	leo := p.LogEndOffset()

	rejected := fmt.Errorf("%w: broker %d is fenced", cluster.ErrRejected, follower)
	at := time.Now().UnixMilli()
	var waits []int64
	for attempt := range 5 {
		c := p.FollowerFetched(follower, leo, at)
		if c == nil || c.Role != role {
			t.Fatalf("attempt %d: a caught-up follower was not proposed for the ISR", attempt)
		}
		before := time.Now().UnixMilli()
		p.ISRChangeDone(c, rejected)
		retryAt := isrRetryAt(p)
		waits = append(waits, retryAt-before)
		// Fetches right after the rejection, and up to the retry time,
		// propose nothing.
		for range 100 {
			if c := p.FollowerFetched(follower, leo, before); c != nil {
				t.Fatalf("attempt %d: proposed again at once after a rejection", attempt)
			}
		}
		if c := p.FollowerFetched(follower, leo, retryAt-1); c != nil {
			t.Fatalf("attempt %d: proposed before the backoff ended", attempt)
		}
		at = retryAt
	}
	// 100 ms, then doubling (a few ms of slack for the clock read).
	for i, w := range waits {
		want := ISRRetryBackoff.Milliseconds() << i
		if w < want-5 || w > want+50 {
			t.Fatalf("wait %d was %d ms, want about %d (all: %v)", i, w, want, waits)
		}
	}
	// A new role (a new partition epoch) decides afresh; the shrink path
	// honours the same wait.
	role2 := &Role{Leader: self, LeaderEpoch: role.LeaderEpoch, PartitionEpoch: 8, Replicas: role.Replicas, ISR: []int32{self, follower}}
	set := time.Now().UnixMilli()
	p.SetRole(role2, set)
	p.FollowerFetched(follower, leo, set) // caught up at set…
	late := set + 10                      // …and, with replica.lag.time.max.ms 0, lagging from here on
	c := p.LaggingISR(late, 0)
	if c == nil || len(c.ISR) != 1 || c.ISR[0] != self {
		t.Fatalf("a new role: shrink proposal %+v, want [%d] at once", c, self)
	}
	p.ISRChangeDone(c, rejected)
	if c := p.LaggingISR(late, 0); c != nil {
		t.Fatal("LaggingISR proposed again at once after a rejection")
	}
	retryAt := isrRetryAt(p)
	if c := p.LaggingISR(retryAt-1, 0); c != nil {
		t.Fatal("LaggingISR proposed before the backoff ended")
	}
	if c := p.LaggingISR(retryAt, 0); c == nil {
		t.Fatal("LaggingISR did not propose once the backoff ended")
	}
}

// isrRetryAt is the time (unix ms) before which no new ISR proposal is
// made after a failed one.
func isrRetryAt(r *Replica) int64 {
	r.rep.Lock()
	defer r.rep.Unlock()
	return r.rep.isrRetryAtMs
}

// TestTimedOutAdditionIsProposedAgain: a follower proposed for the ISR
// stops right after (the proposal timed out, the controller failing over);
// FollowerFetched never proposes it again, yet the unknown addition holds
// the high watermark. LaggingISR asks again after the backoff; the
// controller's definite rejection (the follower is fenced) then lets the
// high watermark go on without it. A stale partition epoch (the ISR did
// change, maybe by this addition) keeps the addition counted.
func TestTimedOutAdditionIsProposedAgain(t *testing.T) {
	const self, follower = 1, 2
	p := openTestReplica(t, self)
	role := &Role{Leader: self, LeaderEpoch: 1, PartitionEpoch: 7, Replicas: []int32{self, follower}, ISR: []int32{self}}
	now := time.Now().UnixMilli()
	p.SetRole(role, now)
	leo := p.LogEndOffset()
	c := p.FollowerFetched(follower, leo, now)
	if c == nil {
		t.Fatal("a caught-up follower was not proposed")
	}
	p.ISRChangeDone(c, fmt.Errorf("metadata: proposal not applied: %w", context.DeadlineExceeded))
	if got := pendingAdd(p); got != follower {
		t.Fatalf("after a timeout the pending addition is %d, want %d still counted", got, follower)
	}
	retryAt := isrRetryAt(p)
	if c := p.LaggingISR(retryAt-1, 30_000); c != nil {
		t.Fatal("proposed again before the backoff ended")
	}
	again := p.LaggingISR(retryAt, 30_000)
	if again == nil || len(again.ISR) != 2 || again.ISR[1] != follower {
		t.Fatalf("the timed-out addition was not proposed again: %+v", again)
	}
	p.ISRChangeDone(again, fmt.Errorf("%w: %w", cluster.ErrStalePartitionEpoch, cluster.ErrRejected))
	if got := pendingAdd(p); got != follower {
		t.Fatalf("a stale partition epoch dropped the pending addition (%d)", got)
	}
	third := p.LaggingISR(isrRetryAt(p), 30_000)
	if third == nil {
		t.Fatal("not proposed again after a stale partition epoch")
	}
	p.ISRChangeDone(third, fmt.Errorf("%w: ineligible replica: broker %d is fenced", cluster.ErrRejected, follower))
	if got := pendingAdd(p); got != -1 {
		t.Fatalf("a definite rejection kept the pending addition %d", got)
	}
	if c := p.LaggingISR(isrRetryAt(p), 30_000); c != nil {
		t.Fatalf("proposed %+v after the rejection, want nothing", c)
	}
}

func pendingAdd(r *Replica) int32 {
	r.rep.Lock()
	defer r.rep.Unlock()
	return r.rep.pendingAdd
}
