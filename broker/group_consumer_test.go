package broker

// End-to-end consumer groups with franz-go: members split the partitions,
// take over from leavers, share with joiners, commit as they go and resume
// from the commits after a broker restart; static members rejoin without a
// rebalance.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// startGroupTestBroker is a broker with a short initial rebalance delay.
func startGroupTestBroker(t *testing.T, tune ...func(*Config)) *testBroker {
	t.Helper()
	return startTestBroker(t, append([]func(*Config){func(c *Config) { c.GroupInitialRebalanceDelayMs = 100 }}, tune...)...)
}

// consumeLedger counts how often each record was processed.
type consumeLedger struct {
	mu         sync.Mutex
	seen       map[int32]map[int64]int // partition → offset → times processed
	distinct   int
	commitErrs []error
}

func newConsumeLedger() *consumeLedger {
	return &consumeLedger{seen: map[int32]map[int64]int{}}
}

func (l *consumeLedger) add(recs []*kgo.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range recs {
		m := l.seen[r.Partition]
		if m == nil {
			m = map[int64]int{}
			l.seen[r.Partition] = m
		}
		if m[r.Offset] == 0 {
			l.distinct++
		}
		m[r.Offset]++
	}
}

func (l *consumeLedger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.distinct
}

// check fails unless every record up to each partition's end was processed
// exactly once and every commit succeeded.
func (l *consumeLedger) check(t *testing.T, ends map[int32]int64) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, err := range l.commitErrs {
		// A commit sent while a test restarts the broker cannot connect;
		// the member keeps its position, so nothing is processed twice.
		if strings.Contains(err.Error(), "unable to dial") {
			continue
		}
		t.Errorf("commit failed: %v", err)
	}
	for p, end := range ends {
		for o := int64(0); o < end; o++ {
			if n := l.seen[p][o]; n != 1 {
				t.Errorf("partition %d offset %d processed %d times", p, o, n)
			}
		}
	}
}

// groupMember is one franz-go group consumer that processes what it polls
// and commits it before allowing a rebalance.
type groupMember struct {
	name   string
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	revoked int // partitions revoked or lost so far
}

func startGroupMember(t *testing.T, tb *testBroker, name, group, topic string, ledger *consumeLedger, opts ...kgo.Opt) *groupMember {
	t.Helper()
	m := &groupMember{name: name, done: make(chan struct{})}
	base := []kgo.Opt{
		kgo.SeedBrokers(tb.addr()),
		kgo.ClientID(name),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.HeartbeatInterval(100 * time.Millisecond),
		kgo.SessionTimeout(6 * time.Second),
		kgo.RebalanceTimeout(15 * time.Second),
		kgo.FetchMaxWait(200 * time.Millisecond),
		kgo.RetryTimeout(20 * time.Second),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, lost map[string][]int32) { m.addRevoked(lost) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, lost map[string][]int32) { m.addRevoked(lost) }),
	}
	if os.Getenv("STRATA_TEST_DEBUG") != "" {
		base = append(base, kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelDebug, func() string { return name + " " })))
	}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	m.cl = cl
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go func() {
		defer close(m.done)
		for {
			fs := cl.PollRecords(ctx, 1000)
			if fs.IsClientClosed() || ctx.Err() != nil {
				cl.AllowRebalance()
				return
			}
			recs := fs.Records()
			ledger.add(recs)
			if len(recs) > 0 {
				if err := cl.CommitRecords(context.Background(), recs...); err != nil {
					ledger.mu.Lock()
					ledger.commitErrs = append(ledger.commitErrs, fmt.Errorf("%s: %w", name, err))
					ledger.mu.Unlock()
				}
			}
			cl.AllowRebalance()
		}
	}()
	t.Cleanup(m.stop)
	return m
}

func (m *groupMember) addRevoked(ps map[string][]int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range ps {
		m.revoked += len(p)
	}
}

func (m *groupMember) revokedCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.revoked
}

// stop ends the poll loop and closes the client, which leaves the group
// (a static member does not leave).
func (m *groupMember) stop() {
	select {
	case <-m.done:
		return
	default:
	}
	m.cancel()
	<-m.done
	m.cl.Close()
}

// produceSpread produces n records round-robin over the topic's partitions
// and returns the new log ends.
func produceSpread(t *testing.T, tb *testBroker, topic string, partitions int32, n int) map[int32]int64 {
	t.Helper()
	cl := tb.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx := testContext(t)
	for i := range n {
		r := &kgo.Record{Topic: topic, Partition: int32(i) % partitions, Value: []byte(fmt.Sprintf("v%d", i))}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	ends := map[int32]int64{}
	for p := range partitions {
		ends[p] = tb.logEnd(topic, p)
	}
	return ends
}

// waitForBalance waits until the group is Stable with the given members,
// each partition of the topic assigned to exactly one of them and each
// member holding partitions/len(members); it returns the snapshot.
func waitForBalance(t *testing.T, tb *testBroker, group, topic string, partitions int32, members ...*groupMember) groupSnapshot {
	t.Helper()
	var last groupSnapshot
	balanced := func() bool {
		snap, ok := findGroupSnapshot(tb, group)
		if !ok {
			return false
		}
		last = snap
		if snap.State != "Stable" || len(snap.Members) != len(members) {
			return false
		}
		var clients []string
		owner := map[int32]int{}
		for _, m := range snap.Members {
			clients = append(clients, m.ClientID)
			if len(m.Assigned[topic]) != int(partitions)/len(members) {
				return false
			}
			for _, p := range m.Assigned[topic] {
				owner[p]++
			}
		}
		for p := range partitions {
			if owner[p] != 1 {
				return false
			}
		}
		sort.Strings(clients)
		var want []string
		for _, m := range members {
			want = append(want, m.name)
		}
		sort.Strings(want)
		return slices.Equal(clients, want)
	}
	deadline := time.Now().Add(45 * time.Second)
	for !balanced() {
		if time.Now().After(deadline) {
			t.Fatalf("group %s never balanced over %v; last snapshot %+v", group, memberNames(members), last)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return last
}

func memberNames(ms []*groupMember) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.name)
	}
	return out
}

func findGroupSnapshot(tb *testBroker, group string) (groupSnapshot, bool) {
	for _, s := range tb.srv.groups.snapshot() {
		if s.Group == group {
			return s, true
		}
	}
	return groupSnapshot{}, false
}

// waitCommitted waits until the group's committed offsets reach ends.
func waitCommitted(t *testing.T, tb *testBroker, group, topic string, ends map[int32]int64) {
	t.Helper()
	waitFor(t, 30*time.Second, "commits to reach the log ends", func() bool {
		snap, ok := findGroupSnapshot(tb, group)
		if !ok {
			return false
		}
		got := map[int32]int64{}
		for _, o := range snap.Offsets {
			if o.Topic == topic {
				got[o.Partition] = o.Offset
			}
		}
		for p, end := range ends {
			if got[p] != end {
				return false
			}
		}
		return true
	})
}

func TestGroupConsumersSplitTakeOverAndRebalance(t *testing.T) {
	balancers := []struct {
		name string
		opt  kgo.Opt
	}{
		{"cooperative-sticky", kgo.Balancers(kgo.CooperativeStickyBalancer())},
		{"range", kgo.Balancers(kgo.RangeBalancer())},
		{"roundrobin", kgo.Balancers(kgo.RoundRobinBalancer())},
	}
	for _, b := range balancers {
		t.Run(b.name, func(t *testing.T) {
			const partitions = 6
			tb := startGroupTestBroker(t)
			topic, group := "orders-"+b.name, "workers-"+b.name
			tb.createTopic(topic, partitions, nil)
			ledger := newConsumeLedger()
			total := 0

			ends := produceSpread(t, tb, topic, partitions, 300)
			total += 300
			m1 := startGroupMember(t, tb, "m1", group, topic, ledger, b.opt)
			m2 := startGroupMember(t, tb, "m2", group, topic, ledger, b.opt)
			m3 := startGroupMember(t, tb, "m3", group, topic, ledger, b.opt)
			waitForBalance(t, tb, group, topic, partitions, m1, m2, m3)
			waitFor(t, 30*time.Second, "the first batch", func() bool { return ledger.count() == total })
			waitCommitted(t, tb, group, topic, ends)

			// m3 leaves: m1 and m2 take its partitions over.
			m3.stop()
			waitForBalance(t, tb, group, topic, partitions, m1, m2)
			ends = produceSpread(t, tb, topic, partitions, 300)
			total += 300
			waitFor(t, 30*time.Second, "the second batch", func() bool { return ledger.count() == total })
			waitCommitted(t, tb, group, topic, ends)

			// m4 joins: the partitions are shared three ways again.
			m4 := startGroupMember(t, tb, "m4", group, topic, ledger, b.opt)
			waitForBalance(t, tb, group, topic, partitions, m1, m2, m4)
			ends = produceSpread(t, tb, topic, partitions, 300)
			total += 300
			waitFor(t, 30*time.Second, "the third batch", func() bool { return ledger.count() == total })
			waitCommitted(t, tb, group, topic, ends)

			ledger.check(t, ends)
		})
	}
}

func TestGroupResumesFromCommittedOffsetsAfterRestart(t *testing.T) {
	const partitions = 3
	tb := startGroupTestBroker(t)
	topic, group := "resume", "resumers"
	tb.createTopic(topic, partitions, nil)
	ledger := newConsumeLedger()
	ends := produceSpread(t, tb, topic, partitions, 90)
	m := startGroupMember(t, tb, "first", group, topic, ledger)
	waitFor(t, 30*time.Second, "the first batch", func() bool { return ledger.count() == 90 })
	waitCommitted(t, tb, group, topic, ends)
	before, _ := findGroupSnapshot(tb, group)
	m.stop()

	tb.restart()
	// The group and its offsets are rebuilt from __consumer_offsets.
	var after groupSnapshot
	waitFor(t, 10*time.Second, "the group to be reloaded", func() bool {
		s, ok := findGroupSnapshot(tb, group)
		after = s
		return ok
	})
	if after.Generation != before.Generation+1 || after.State != "Empty" || after.Protocol != "" || len(after.Offsets) != partitions {
		t.Fatalf("reloaded group %+v, before restart %+v", after, before)
	}

	ends = produceSpread(t, tb, topic, partitions, 90)
	second := newConsumeLedger()
	startGroupMember(t, tb, "second", group, topic, second)
	waitFor(t, 30*time.Second, "the second batch", func() bool { return second.count() == 90 })
	waitCommitted(t, tb, group, topic, ends)
	second.mu.Lock()
	for p, offs := range second.seen {
		for o := range offs {
			if o < 30 {
				t.Errorf("partition %d offset %d consumed again after the restart", p, o)
			}
		}
	}
	second.mu.Unlock()
}

func TestGroupStaticMemberRejoinsWithoutRebalance(t *testing.T) {
	const partitions = 4
	tb := startGroupTestBroker(t)
	topic, group := "static", "statics"
	tb.createTopic(topic, partitions, nil)
	ledger := newConsumeLedger()
	a := startGroupMember(t, tb, "a", group, topic, ledger, kgo.InstanceID("instance-a"))
	b := startGroupMember(t, tb, "b", group, topic, ledger, kgo.InstanceID("instance-b"))
	before := waitForBalance(t, tb, group, topic, partitions, a, b)

	// Restart the member that does not lead (a restarted leader rejoins
	// the same way but also recomputes the plan, KIP-814).
	restart, stay, instance := a, b, "instance-a"
	if before.Leader == memberIDOf(before, "a") {
		restart, stay, instance = b, a, "instance-b"
	}
	revokedBefore := stay.revokedCount()
	oldID := memberIDOf(before, restart.name)
	restart.stop() // a static member does not leave the group
	again := startGroupMember(t, tb, restart.name, group, topic, ledger, kgo.InstanceID(instance))
	waitFor(t, 30*time.Second, "the restarted member to rejoin", func() bool {
		s, _ := findGroupSnapshot(tb, group)
		id := memberIDOf(s, restart.name)
		return id != "" && id != oldID
	})
	after := waitForBalance(t, tb, group, topic, partitions, again, stay)
	if after.Generation != before.Generation {
		t.Fatalf("generation moved from %d to %d: the static rejoin rebalanced", before.Generation, after.Generation)
	}
	if id := memberIDOf(after, restart.name); id == oldID || id == "" {
		t.Fatalf("member id %q after the rejoin, was %q", id, oldID)
	}
	if n := stay.revokedCount(); n != revokedBefore {
		t.Fatalf("the other member lost %d partitions", n-revokedBefore)
	}
	// Progress goes on under the new member id.
	ends := produceSpread(t, tb, topic, partitions, 40)
	waitCommitted(t, tb, group, topic, ends)
}

func memberIDOf(s groupSnapshot, clientID string) string {
	for _, m := range s.Members {
		if m.ClientID == clientID {
			return m.MemberID
		}
	}
	return ""
}

// TestGroupSurvivesBrokerRestart: a member that keeps running across a
// broker restart carries on in the same generation — the group, members
// included, is restored from __consumer_offsets as Kafka restores it — and
// nothing is processed twice.
func TestGroupSurvivesBrokerRestart(t *testing.T) {
	const partitions = 2
	tb := startGroupTestBroker(t)
	topic, group := "across-restart", "survivors"
	tb.createTopic(topic, partitions, nil)
	ledger := newConsumeLedger()
	ends := produceSpread(t, tb, topic, partitions, 40)
	// franz-go gives up a heartbeat after a few refused dials and rejoins
	// (a new generation) if the restart takes longer than that, which a
	// loaded machine's restart can; this member keeps dialling for up to
	// 5 s, as a client would across a rolling restart.
	patient := func(ctx context.Context, network, host string) (net.Conn, error) {
		deadline := time.Now().Add(5 * time.Second)
		for {
			var d net.Dialer
			c, err := d.DialContext(ctx, network, host)
			if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || time.Now().After(deadline) {
				return c, err
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	m := startGroupMember(t, tb, "survivor", group, topic, ledger, kgo.Dialer(patient))
	before := waitForBalance(t, tb, group, topic, partitions, m)
	waitCommitted(t, tb, group, topic, ends)

	tb.restart()
	ends = produceSpread(t, tb, topic, partitions, 40)
	waitCommitted(t, tb, group, topic, ends)
	after := waitForBalance(t, tb, group, topic, partitions, m)
	if after.Generation != before.Generation || memberIDOf(after, "survivor") != memberIDOf(before, "survivor") {
		t.Fatalf("after the restart: generation %d member %s; before: %d %s", after.Generation, memberIDOf(after, "survivor"), before.Generation, memberIDOf(before, "survivor"))
	}
	if m.revokedCount() != 0 {
		t.Fatalf("%d partitions were revoked across the restart", m.revokedCount())
	}
	ledger.check(t, ends)
}
