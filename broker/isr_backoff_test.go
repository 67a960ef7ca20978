package broker

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// TestISRProposalBacksOffAfterRejection: a follower the quorum refuses to
// add (a fenced broker, say) keeps fetching; after a rejected proposal the
// leader waits before proposing it again, doubling the wait per failure,
// instead of proposing on every fetch (one node once logged the same
// rejection 3,400 times in ten seconds). A new role starts afresh.
func TestISRProposalBacksOffAfterRejection(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("isr", 1, nil)
	p := tb.srv.topics.partition("isr", 0)
	self := tb.srv.cfg.NodeID
	follower := self + 1
	role := &replicaRole{leader: self, leaderEpoch: p.leaderEpoch() + 1, partitionEpoch: 7, replicas: []int32{self, follower}, isr: []int32{self}}
	now := time.Now().UnixMilli()
	p.setRole(role, now)
	leo := p.log.LogEndOffset()

	rejected := fmt.Errorf("%w: broker %d is fenced", cluster.ErrRejected, follower)
	at := time.Now().UnixMilli()
	var waits []int64
	for attempt := range 5 {
		isr, r := p.followerFetched(follower, leo, at)
		if isr == nil || r != role {
			t.Fatalf("attempt %d: a caught-up follower was not proposed for the ISR", attempt)
		}
		before := time.Now().UnixMilli()
		p.isrChangeDone(r, rejected)
		p.rep.Lock()
		retryAt := p.rep.isrRetryAtMs
		p.rep.Unlock()
		waits = append(waits, retryAt-before)
		// Fetches right after the rejection, and up to the retry time,
		// propose nothing.
		for range 100 {
			if isr, _ := p.followerFetched(follower, leo, before); isr != nil {
				t.Fatalf("attempt %d: proposed again at once after a rejection", attempt)
			}
		}
		if isr, _ := p.followerFetched(follower, leo, retryAt-1); isr != nil {
			t.Fatalf("attempt %d: proposed before the backoff ended", attempt)
		}
		at = retryAt
	}
	// 100 ms, then doubling (a few ms of slack for the clock read).
	for i, w := range waits {
		want := isrRetryBackoff.Milliseconds() << i
		if w < want-5 || w > want+50 {
			t.Fatalf("wait %d was %d ms, want about %d (all: %v)", i, w, want, waits)
		}
	}
	// A new role (a new partition epoch) decides afresh; the shrink path
	// honours the same wait.
	role2 := &replicaRole{leader: self, leaderEpoch: role.leaderEpoch, partitionEpoch: 8, replicas: role.replicas, isr: []int32{self, follower}}
	set := time.Now().UnixMilli()
	p.setRole(role2, set)
	p.followerFetched(follower, leo, set) // caught up at set…
	late := set + 10                      // …and, with replica.lag.time.max.ms 0, lagging from here on
	isr, r := p.laggingISR(late, 0)
	if len(isr) != 1 || isr[0] != self {
		t.Fatalf("a new role: shrink proposal %v, want [%d] at once", isr, self)
	}
	p.isrChangeDone(r, rejected)
	if isr, _ := p.laggingISR(late, 0); isr != nil {
		t.Fatal("laggingISR proposed again at once after a rejection")
	}
	p.rep.Lock()
	retryAt := p.rep.isrRetryAtMs
	p.rep.Unlock()
	if isr, _ := p.laggingISR(retryAt-1, 0); isr != nil {
		t.Fatal("laggingISR proposed before the backoff ended")
	}
	if isr, _ := p.laggingISR(retryAt, 0); isr == nil {
		t.Fatal("laggingISR did not propose once the backoff ended")
	}
}
