package broker

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// A stopped node (no controlled shutdown: as after kill -9, its ports
// refuse connections) is fenced as soon as its followers are refused,
// long before its 20 s session expires: leadership moves and the ISR
// shrinks. When it comes back it is unfenced and rejoins the ISR.
func TestRefusedLeaderFencedAtOnce(t *testing.T) {
	c := startTestCluster(t, 3, func(cfg *Config) {
		cfg.BrokerSessionTimeoutMs = 20000
		cfg.ControlledShutdownEnable = false
	})
	ctx := testContext(t)
	adm := kadm.NewClient(c.client())
	if res, err := adm.CreateTopic(ctx, 1, 3, nil, "refused"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	var leader int32
	waitUntil(t, 10*time.Second, "refused-0 led with a full ISR", func() bool {
		l, isr := leaderOf(ctx, adm, "refused", 0)
		leader = l
		return l > 0 && len(isr) == 3
	})
	other := c.node(leader%3 + 1)
	killed := time.Now()
	// As after kill -9, the node's raft goes silent when its ports close
	// (Close alone keeps raft going until the partitions are closed, so a
	// refusal would be rightly voided by the raft messages after it).
	_ = c.node(leader).srv.member.Close()
	c.node(leader).stop()
	waitUntil(t, 8*time.Second, "a new leader after the refusal", func() bool {
		st := other.srv.clusterState()
		tp, ok := st.Topic("refused")
		if !ok || len(tp.Partitions) == 0 {
			return false
		}
		p := tp.Partitions[0]
		return p.Leader > 0 && p.Leader != leader && len(p.ISR) == 2 && st.Brokers[leader].Fenced
	})
	took := time.Since(killed)
	t.Logf("leader %d stopped: fenced and replaced after %v (session 20 s)", leader, took)
	if took > 5*time.Second {
		t.Fatalf("fenced after %v: the session timeout, not the refusal", took)
	}
	// Back: unfenced (a new incarnation) and in the ISR again.
	c.startAll()
	waitUntil(t, 20*time.Second, "the node back in the ISR", func() bool {
		_, isr := leaderOf(ctx, adm, "refused", 0)
		return len(isr) == 3 && !other.srv.clusterState().Brokers[leader].Fenced
	})
}
