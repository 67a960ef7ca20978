package broker

// A sarama consumer group (the second, independent client) shares the
// partitions, survives a member leaving and commits everything.

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

type saramaLedgerHandler struct {
	mu   sync.Mutex
	seen map[int32]map[int64]int
}

func (h *saramaLedgerHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *saramaLedgerHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *saramaLedgerHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		h.mu.Lock()
		if h.seen[msg.Partition] == nil {
			h.seen[msg.Partition] = map[int64]int{}
		}
		h.seen[msg.Partition][msg.Offset]++
		h.mu.Unlock()
		sess.MarkMessage(msg, "")
	}
	return nil
}

// covered counts the distinct records seen below each end.
func (h *saramaLedgerHandler) covered(ends map[int32]int64) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for p, end := range ends {
		for o := range h.seen[p] {
			if o < end {
				n++
			}
		}
	}
	return n
}

type saramaMember struct {
	name   string
	group  sarama.ConsumerGroup
	cancel context.CancelFunc
	done   chan struct{}
}

func startSaramaMember(t *testing.T, tb *testBroker, name, group, topic string, h *saramaLedgerHandler) *saramaMember {
	t.Helper()
	cfg := saramaConfig()
	cfg.ClientID = name
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Interval = 100 * time.Millisecond
	cfg.Consumer.Group.Heartbeat.Interval = 200 * time.Millisecond
	cfg.Consumer.Group.Session.Timeout = 6 * time.Second
	cfg.Consumer.MaxWaitTime = 200 * time.Millisecond
	cg, err := sarama.NewConsumerGroup([]string{tb.addr()}, group, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &saramaMember{name: name, group: cg, cancel: cancel, done: make(chan struct{})}
	go func() {
		for range cg.Errors() {
			// Rebalances surface here; the loop below rejoins.
		}
	}()
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{topic}, h); err != nil && ctx.Err() == nil {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}()
	t.Cleanup(m.stop)
	return m
}

func (m *saramaMember) stop() {
	select {
	case <-m.done:
		return
	default:
	}
	m.cancel()
	<-m.done
	m.group.Close()
}

func TestGroupSaramaConsumers(t *testing.T) {
	const partitions = 6
	tb := startGroupTestBroker(t)
	topic, group := "sarama-group", "sarama-workers"
	tb.createTopic(topic, partitions, nil)
	ends := produceSpread(t, tb, topic, partitions, 300)
	h := &saramaLedgerHandler{seen: map[int32]map[int64]int{}}

	m1 := startSaramaMember(t, tb, "s1", group, topic, h)
	m2 := startSaramaMember(t, tb, "s2", group, topic, h)
	m3 := startSaramaMember(t, tb, "s3", group, topic, h)
	waitForBalance(t, tb, group, topic, partitions, &groupMember{name: m1.name}, &groupMember{name: m2.name}, &groupMember{name: m3.name})
	waitFor(t, 30*time.Second, "the first batch", func() bool { return h.covered(ends) == 300 })
	waitCommitted(t, tb, group, topic, ends)

	m3.stop()
	waitForBalance(t, tb, group, topic, partitions, &groupMember{name: m1.name}, &groupMember{name: m2.name})
	ends = produceSpread(t, tb, topic, partitions, 300)
	waitFor(t, 30*time.Second, "the second batch", func() bool { return h.covered(ends) == 600 })
	waitCommitted(t, tb, group, topic, ends)
}
