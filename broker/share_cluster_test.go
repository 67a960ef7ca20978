package broker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// shareLedger is what share consumers saw: every delivery of a record
// and the acknowledgements the broker confirmed (their flush reported no
// error for the record's partition; an error leaves the whole poll's
// records of the partition unconfirmed, so confirmed is a lower bound).
type shareLedger struct {
	mu        sync.Mutex
	delivered map[string]int // record value → deliveries seen
	confirmed map[string]int // record value → acknowledgements confirmed
	again     []string       // deliveries of a record after its confirmed acknowledgement
	redeliver int            // deliveries with a delivery count above 1
}

func (l *shareLedger) counts() (delivered, confirmed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.delivered), len(l.confirmed)
}

// runShareMember polls, acknowledges every record and flushes, one poll
// at a time, so the ack results a flush reports are those of its poll.
func runShareMember(ctx context.Context, cl *kgo.Client, failed *sync.Map, l *shareLedger) {
	for ctx.Err() == nil {
		fs := cl.PollRecords(ctx, 50)
		var polled []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) {
			polled = append(polled, r)
			l.mu.Lock()
			v := string(r.Value)
			if l.confirmed[v] > 0 {
				l.again = append(l.again, fmt.Sprintf("%s (p%d@%d, delivery %d)", v, r.Partition, r.Offset, r.DeliveryCount()))
			}
			l.delivered[v]++
			if r.DeliveryCount() > 1 {
				l.redeliver++
			}
			l.mu.Unlock()
			r.Ack(kgo.AckAccept)
		})
		if len(polled) == 0 {
			continue
		}
		failed.Clear()
		if err := cl.FlushAcks(ctx); err != nil {
			return
		}
		l.mu.Lock()
		for _, r := range polled {
			if _, bad := failed.Load(r.Partition); !bad {
				l.confirmed[string(r.Value)]++
			}
		}
		l.mu.Unlock()
	}
}

// TestShareGroupClusterFailover: three nodes, a share group consuming a
// 2-partition, RF=3 topic while it is written. The leader of partition 0
// stops (its share-partition state moves to the next leader through the
// share coordinator) and restarts, then a preferred election moves the
// leadership from the live interim leader back to it (the interim leader
// must drop its in-memory state) while a third member holds records in
// flight. No record whose acknowledgement was confirmed is delivered
// again or confirmed twice, every produced record is delivered, the held
// ones to the other members, and each share-partition ends with every
// record acknowledged and nothing in flight.
func TestShareGroupClusterFailover(t *testing.T) {
	c := startTestCluster(t, 3, func(cfg *Config) {
		mustSet(t, cfg, "auto.leader.rebalance.enable", "false")
		// A stop whose controlled shutdown is not committed (the node
		// led the quorum) leaves it in the ISRs until this lag: the
		// __share_group_state writes wait for it meanwhile.
		cfg.ReplicaLagTimeMaxMs = 3000
		cfg.GroupShareHeartbeatIntervalMs = 500
		cfg.GroupShareSessionTimeoutMs = 10000
	})
	ctx := testContext(t)
	adm := kadm.NewClient(c.client())
	const topic, group = "sq", "sq-workers"
	if res, err := adm.CreateTopic(ctx, 2, 3, map[string]*string{"min.insync.replicas": ptr("2")}, topic); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	setShareGroupConfigs(t, c.node(1), group, map[string]string{"share.auto.offset.reset": "earliest", "share.delivery.count.limit": "10", "share.record.lock.duration.ms": "4000"})
	var preferred int32
	waitUntil(t, 10*time.Second, "partition 0 led by its preferred replica", func() bool {
		md, err := adm.Metadata(ctx, topic)
		if err != nil || len(md.Topics[topic].Partitions[0].Replicas) != 3 {
			return false
		}
		preferred = md.Topics[topic].Partitions[0].Replicas[0]
		l, _ := leaderOf(ctx, adm, topic, 0)
		return l == preferred
	})

	prod := c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(1000), kgo.MetadataMinAge(250*time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	sp := startSteadyProducer(prod, topic, 5*time.Millisecond)

	ledger := &shareLedger{delivered: map[string]int{}, confirmed: map[string]int{}}
	cctx, stopConsumers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 2 {
		failed := &sync.Map{}
		cl := c.client(kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(300*time.Millisecond),
			kgo.MetadataMinAge(250*time.Millisecond), kgo.ShareMaxRecords(20),
			kgo.ShareAckCallback(func(_ *kgo.Client, rs kgo.ShareAckResults) {
				for _, r := range rs {
					if r.Err != nil {
						failed.Store(r.Partition, true)
					}
				}
			}))
		wg.Add(1)
		go func() {
			defer wg.Done()
			runShareMember(cctx, cl, failed, ledger)
		}()
	}
	defer func() { stopConsumers(); wg.Wait() }()
	progress := func(what string, more int) {
		t.Helper()
		_, base := ledger.counts()
		// 60 s: on a loaded machine (-race beside other test runs) the
		// share coordinator's __share_group_state writes were seen waiting
		// over 30 s for the ISR after the stop (the stopped node's or a
		// slow follower's acknowledgement); see the issue 24 note.
		waitUntil(t, 60*time.Second, what, func() bool { _, n := ledger.counts(); return n >= base+more })
	}
	progress("acknowledgements flowing", 200)

	// Failover 1: the leader of partition 0 stops, and comes back.
	c.node(preferred).stop()
	var interim int32
	waitUntil(t, 20*time.Second, "a new leader of partition 0", func() bool {
		interim, _ = leaderOf(ctx, adm, topic, 0)
		return interim > 0 && interim != preferred
	})
	progress("acknowledgements after the failover", 200)
	c.startAll()
	waitUntil(t, 30*time.Second, "the restarted node back in the ISR", func() bool {
		_, isr := leaderOf(ctx, adm, topic, 0)
		return len(isr) == 3
	})

	// A member that takes records of partition 0 and never acknowledges
	// them: they are in flight at the next failover.
	holder := c.client(kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(300*time.Millisecond), kgo.ShareMaxRecords(20))
	held := map[string]bool{}
	waitUntil(t, 20*time.Second, "the holder acquiring records of partition 0", func() bool {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		// A poll accepts what the one before it returned (franz-go's
		// implicit acknowledgement): those count as delivered here.
		holder.PollRecords(pctx, 20).EachRecord(func(r *kgo.Record) {
			ledger.mu.Lock()
			ledger.delivered[string(r.Value)]++
			ledger.mu.Unlock()
			if r.Partition == 0 {
				held[string(r.Value)] = true
			}
		})
		return len(held) > 0
	})

	// Failover 2: a preferred election takes partition 0 from the live
	// interim leader.
	if res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{topic: {0: {}}}); err != nil || res[topic][0].Err != nil {
		t.Fatalf("preferred election: %v %+v", err, res)
	}
	waitUntil(t, 20*time.Second, "the preferred replica leading again", func() bool {
		l, _ := leaderOf(ctx, adm, topic, 0)
		return l == preferred
	})
	progress("acknowledgements after the election", 200)
	if _, _, _, held := sharePartitionState(c.node(interim), group, topic, 0); held {
		t.Errorf("node %d still holds the share-partition of partition 0 after losing its leadership", interim)
	}

	acked := sp.finish()
	// Done when every share-partition, at its current leader, has every
	// record up to the high watermark acknowledged and nothing in flight.
	shareDone := func(p int32) (start, end, lag, hw int64, leader int32, ok bool) {
		leader, _ = leaderOf(ctx, adm, topic, p)
		if leader <= 0 || c.node(leader).srv == nil {
			return 0, 0, 0, 0, leader, false
		}
		start, end, lag, held := sharePartitionState(c.node(leader), group, topic, p)
		hw = c.node(leader).srv.topics.partition(topic, p).HighWatermark()
		return start, end, lag, hw, leader, held && start == hw && end == hw && lag == 0
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, _, _, _, _, done0 := shareDone(0)
		_, _, _, _, _, done1 := shareDone(1)
		if done0 && done1 {
			break
		}
		if time.Now().After(deadline) {
			for p := int32(0); p < 2; p++ {
				start, end, lag, hw, leader, ok := shareDone(p)
				t.Errorf("partition %d at leader %d: start %d end %d lag %d hw %d done %v", p, leader, start, end, lag, hw, ok)
			}
			d, cf := ledger.counts()
			t.Fatalf("timed out waiting for every record acknowledged (%d produced, %d delivered, %d confirmed)", len(acked), d, cf)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// DescribeShareGroupOffsets at the group's coordinator sees both
	// share-partitions, wherever they are led and stored
	// (ReadShareGroupStateSummary at their share coordinators).
	waitUntil(t, 20*time.Second, "the share group's offsets described", func() bool {
		offs, err := adm.DescribeShareGroupOffsets(ctx, group)
		if err != nil || offs[group].Err != nil {
			return false
		}
		for p := int32(0); p < 2; p++ {
			o, ok := offs[group].Offsets[topic][p]
			l, _ := leaderOf(ctx, adm, topic, p)
			if !ok || l <= 0 || o.Lag != 0 || o.StartOffset != c.node(l).srv.topics.partition(topic, p).HighWatermark() {
				return false
			}
		}
		return true
	})
	stopConsumers()
	wg.Wait()

	ledger.mu.Lock()
	defer ledger.mu.Unlock()
	for k := range held {
		if ledger.delivered[k] < 2 { // the holder's delivery, then another member's
			t.Errorf("record %s, held in flight at the election, never delivered to the other members", k)
		}
	}
	if len(ledger.again) > 0 {
		t.Errorf("%d records delivered again after their acknowledgement was confirmed, e.g. %v", len(ledger.again), ledger.again[:min(5, len(ledger.again))])
	}
	for k, n := range ledger.confirmed {
		if n > 1 {
			t.Errorf("record %s acknowledged %d times", k, n)
		}
	}
	// Every produced record was delivered (and, by the state above,
	// acknowledged); none was acknowledged twice.
	for k := range acked {
		if ledger.delivered[k] == 0 {
			t.Errorf("record %s never delivered", k)
		}
	}
	if ledger.redeliver < len(held) {
		t.Errorf("%d redeliveries, want at least the %d records held at the election", ledger.redeliver, len(held))
	}
	t.Logf("%d records produced and acknowledged once; %d deliveries were redeliveries (%d records held at the election)", len(acked), ledger.redeliver, len(held))
}
