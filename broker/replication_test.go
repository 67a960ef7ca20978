package broker

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/brokertest"
	"github.com/strata-streaming/strata/metadata"
)

// testCluster is n in-process nodes (ids 1..n) forming one metadata quorum
// on loopback ports chosen at run time.
type testCluster struct {
	t     testing.TB
	nodes []*testBroker
}

// freeLoopbackAddr is brokertest.FreeAddr: a free port below the ephemeral
// range, so a node restarted on it does not find it taken.
func freeLoopbackAddr(t testing.TB) string { return brokertest.FreeAddr(t) }

func startTestCluster(t testing.TB, n int, tune ...func(*Config)) *testCluster {
	t.Helper()
	c := &testCluster{t: t}
	var voters []string
	raftAddrs := make([]string, n)
	for i := range n {
		raftAddrs[i] = freeLoopbackAddr(t)
		voters = append(voters, fmt.Sprintf("%d@%s", i+1, raftAddrs[i]))
	}
	for i := range n {
		cfg := DefaultConfig()
		cfg.NodeID = int32(i + 1)
		cfg.DataDir = t.TempDir()
		cfg.Listen = freeLoopbackAddr(t)
		cfg.HTTPListen = ""
		cfg.ControllerQuorumVoters = strings.Join(voters, ",")
		cfg.ControllerListen = raftAddrs[i]
		// Tests that place replicas themselves must not see them moved:
		// the balancer runs only where a test turns it on.
		cfg.BalancerEnable = false
		for _, f := range tune {
			f(&cfg)
		}
		c.nodes = append(c.nodes, &testBroker{t: t, cfg: cfg})
	}
	c.startAll()
	t.Cleanup(func() {
		for _, nb := range c.nodes {
			nb.stop()
		}
	})
	// A node serves once the quorum answers, before the others have
	// registered: a test creating a topic of replication factor n at once
	// would race them (INVALID_REPLICATION_FACTOR).
	waitUntil(t, 30*time.Second, "every node registered and unfenced on every node", func() bool {
		for _, nb := range c.nodes {
			st := nb.srv.clusterState()
			for id := range int32(n) {
				if b, ok := st.Brokers[id+1]; !ok || b.Fenced {
					return false
				}
			}
		}
		return true
	})
	return c
}

// startAll starts every stopped node concurrently (a node waits for a
// quorum before NewServer returns).
func (c *testCluster) startAll() {
	c.t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(c.nodes))
	for i, nb := range c.nodes {
		if nb.srv != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = nb.tryStart()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			c.t.Fatalf("node %d: %v", i+1, err)
		}
	}
}

func (tb *testBroker) tryStart() error {
	level := slog.LevelWarn
	if os.Getenv("STRATA_TEST_DEBUG") != "" {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})).With("node", tb.cfg.NodeID)
	srv, err := NewServer(tb.cfg, logger)
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		srv.Close()
		return err
	}
	tb.srv = srv
	return nil
}

func (c *testCluster) bootstrap() []string {
	var out []string
	for _, nb := range c.nodes {
		out = append(out, nb.cfg.Listen)
	}
	return out
}

func (c *testCluster) client(opts ...kgo.Opt) *kgo.Client {
	c.t.Helper()
	base := []kgo.Opt{kgo.SeedBrokers(c.bootstrap()...), kgo.RetryTimeout(30 * time.Second)}
	if os.Getenv("STRATA_TEST_DEBUG") != "" {
		base = append(base, kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelDebug, nil)))
	}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return cl
}

// addBrokerOnly starts a --roles broker node (an observer of the quorum)
// with the id and adds it to the cluster.
func (c *testCluster) addBrokerOnly(id int32, tune ...func(*Config)) *testBroker {
	c.t.Helper()
	cfg := DefaultConfig()
	cfg.NodeID = id
	cfg.ProcessRoles = "broker"
	cfg.DataDir = c.t.TempDir()
	cfg.Listen = freeLoopbackAddr(c.t)
	cfg.HTTPListen = ""
	cfg.ControllerQuorumVoters = c.nodes[0].cfg.ControllerQuorumVoters
	cfg.BalancerEnable = false
	for _, f := range tune {
		f(&cfg)
	}
	nb := &testBroker{t: c.t, cfg: cfg}
	c.nodes = append(c.nodes, nb)
	c.startAll()
	return nb
}

// node returns the running node with the id.
func (c *testCluster) node(id int32) *testBroker { return c.nodes[id-1] }

func waitUntil(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Three nodes: a topic with three replicas per partition is written with
// acks=all; every node ends with the same log, Metadata names every broker
// and a leader per partition, and records are readable.
func TestReplicationThreeNodes(t *testing.T) {
	c := startTestCluster(t, 3)
	ctx := testContext(t)
	cl := c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("rep"))
	adm := kadm.NewClient(cl)
	res, err := adm.CreateTopic(ctx, 3, 3, map[string]*string{"min.insync.replicas": ptr("2")}, "rep")
	if err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	const n = 300
	for i := range n {
		r := &kgo.Record{Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	md, err := adm.Metadata(ctx, "rep")
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Brokers) != 3 {
		t.Fatalf("metadata lists %d brokers, want 3", len(md.Brokers))
	}
	leaders := map[int32]bool{}
	for _, p := range md.Topics["rep"].Partitions {
		if len(p.Replicas) != 3 || len(p.ISR) != 3 {
			t.Errorf("partition %d: replicas %v isr %v", p.Partition, p.Replicas, p.ISR)
		}
		leaders[p.Leader] = true
	}
	if len(leaders) != 3 {
		t.Errorf("leaders %v: want the three partitions led by three nodes", leaders)
	}
	// Every replica converges on the leader's log end offset.
	for part := int32(0); part < 3; part++ {
		waitUntil(t, 10*time.Second, fmt.Sprintf("replicas of partition %d in step", part), func() bool {
			var ends []int64
			for _, nb := range c.nodes {
				p := nb.srv.topics.partition("rep", part)
				if p == nil {
					return false
				}
				ends = append(ends, p.Log().LogEndOffset())
			}
			return ends[0] == ends[1] && ends[1] == ends[2] && ends[0] > 0
		})
	}
	got := consumeKeys(t, c.client(), "rep", n)
	for i := range n {
		if !got[fmt.Sprintf("k%d", i)] {
			t.Fatalf("record k%d missing", i)
		}
	}
}

// consumeAll reads a topic from the start until want distinct keys arrived.
func consumeKeys(t testing.TB, cl *kgo.Client, topic string, want int) map[string]bool {
	t.Helper()
	cl.AddConsumeTopics(topic)
	cl.SetOffsets(map[string]map[int32]kgo.EpochOffset{})
	got := map[string]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for len(got) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records", len(got), want)
		}
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Key)] = true })
	}
	return got
}

// leaderOf asks the cluster which node leads the partition (-1 if none).
func leaderOf(ctx context.Context, adm *kadm.Client, topic string, partition int32) (leader int32, isr []int32) {
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return -1, nil
	}
	p, ok := md.Topics[topic].Partitions[partition]
	if !ok {
		return -1, nil
	}
	return p.Leader, p.ISR
}

// steadyProducer produces acks=all records with unique keys until stopped,
// remembering every acknowledged key and the longest gap between acks.
type steadyProducer struct {
	mu     sync.Mutex
	acked  map[string]bool
	last   time.Time
	maxGap time.Duration
	errs   int
	stop   chan struct{}
	done   chan struct{}
}

func startSteadyProducer(cl *kgo.Client, topic string, every time.Duration) *steadyProducer {
	sp := &steadyProducer{acked: map[string]bool{}, last: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(sp.done)
		inflight := make(chan struct{}, 32)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-sp.stop:
				for range cap(inflight) {
					inflight <- struct{}{}
				}
				return
			case <-tick.C:
			}
			inflight <- struct{}{}
			key := fmt.Sprintf("k%06d", i)
			cl.Produce(context.Background(), &kgo.Record{Topic: topic, Key: []byte(key), Value: []byte(key)}, func(r *kgo.Record, err error) {
				defer func() { <-inflight }()
				sp.mu.Lock()
				defer sp.mu.Unlock()
				if err != nil {
					sp.errs++
					return
				}
				now := time.Now()
				if gap := now.Sub(sp.last); gap > sp.maxGap {
					sp.maxGap = gap
				}
				sp.last = now
				sp.acked[key] = true
			})
		}
	}()
	return sp
}

func (sp *steadyProducer) ackedCount() int {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return len(sp.acked)
}

// takeGap returns the longest gap between acks so far and starts anew.
func (sp *steadyProducer) takeGap() time.Duration {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	g := sp.maxGap
	sp.maxGap = 0
	return g
}

func (sp *steadyProducer) finish() map[string]bool {
	close(sp.stop)
	<-sp.done
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.acked
}

// A partition leader stops (rounds over different victims) while a
// producer writes with acks=all: a new leader takes over within seconds,
// the old one rejoins the ISR after it restarts, and no acknowledged
// record is lost.
func TestReplicationLeaderFailover(t *testing.T) {
	// No controlled shutdown: the stop is as abrupt as a crash can be in
	// process (connections and the raft member just go away).
	c := startTestCluster(t, 3, func(cfg *Config) { cfg.ControlledShutdownEnable = false })
	ctx := testContext(t)
	adm := kadm.NewClient(c.client())
	if res, err := adm.CreateTopic(ctx, 1, 3, map[string]*string{"min.insync.replicas": ptr("2")}, "fo"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	prod := c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(1000), kgo.MetadataMinAge(250*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	sp := startSteadyProducer(prod, "fo", 3*time.Millisecond)
	for round := 0; round < 3; round++ {
		before := sp.ackedCount()
		waitUntil(t, 20*time.Second, "acks flowing", func() bool { return sp.ackedCount() > before+100 })
		var victim int32
		waitUntil(t, 10*time.Second, "a leader", func() bool {
			victim, _ = leaderOf(ctx, adm, "fo", 0)
			return victim > 0
		})
		sp.takeGap()
		c.node(victim).stop()
		waitUntil(t, 20*time.Second, "a new leader", func() bool {
			l, _ := leaderOf(ctx, adm, "fo", 0)
			return l > 0 && l != victim
		})
		at := sp.ackedCount()
		waitUntil(t, 20*time.Second, "acks resuming", func() bool { return sp.ackedCount() > at+50 })
		gap := sp.takeGap()
		t.Logf("round %d: stopped leader %d; longest gap between acks %v", round, victim, gap)
		c.startAll()
		waitUntil(t, 30*time.Second, "the restarted node back in the ISR", func() bool {
			_, isr := leaderOf(ctx, adm, "fo", 0)
			return len(isr) == 3
		})
	}
	// Each rejoin was an ISR expansion committed by the leader of the time,
	// which was not the node restarted in that round.
	var expands float64
	for _, nb := range c.nodes {
		expands += testutil.ToFloat64(nb.srv.metrics.isrExpands)
	}
	if expands < 1 {
		t.Errorf("strata_isr_expands_total summed over the nodes = %v, want >= 1", expands)
	}
	acked := sp.finish()
	got := consumeKeys(t, c.client(), "fo", len(acked))
	for k := range acked {
		if !got[k] {
			t.Errorf("acknowledged record %s lost", k)
		}
	}
	t.Logf("%d records acknowledged, all read back", len(acked))
}

// A node stopping with controlled shutdown hands its leaderships over
// before it exits, and gets them back (preferred leaders) after it returns.
func TestReplicationControlledShutdown(t *testing.T) {
	c := startTestCluster(t, 3)
	ctx := testContext(t)
	adm := kadm.NewClient(c.client())
	if res, err := adm.CreateTopic(ctx, 3, 3, nil, "cs"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	var victim int32
	waitUntil(t, 10*time.Second, "a leader", func() bool {
		victim, _ = leaderOf(ctx, adm, "cs", 0)
		return victim > 0
	})
	c.node(victim).stop()
	// The shutdown waited for its own node to apply the handover; another
	// node applies it a moment later.
	other := c.node(victim%3 + 1).srv
	waitUntil(t, 5*time.Second, "the handover applied on another node", func() bool { return other.clusterState().LeadersOn(victim) == 0 })
	c.startAll()
	waitUntil(t, 20*time.Second, "preferred leaders restored", func() bool {
		md, err := adm.Metadata(ctx, "cs")
		if err != nil {
			return false
		}
		for _, p := range md.Topics["cs"].Partitions {
			if len(p.Replicas) == 0 || p.Leader != p.Replicas[0] || len(p.ISR) != 3 {
				return false
			}
		}
		return true
	})
}

// Transactions span partitions led by different nodes: the coordinator
// writes markers on other leaders with WriteTxnMarkers, so committed
// records become visible to read_committed consumers and aborted ones
// never do.
func TestReplicationTransactionsAcrossNodes(t *testing.T) {
	c := startTestCluster(t, 3)
	ctx := testContext(t)
	adm := kadm.NewClient(c.client())
	if res, err := adm.CreateTopic(ctx, 3, 3, nil, "tx"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	waitUntil(t, 10*time.Second, "leaders on three nodes", func() bool {
		md, err := adm.Metadata(ctx, "tx")
		if err != nil {
			return false
		}
		seen := map[int32]bool{}
		for _, p := range md.Topics["tx"].Partitions {
			seen[p.Leader] = true
		}
		return len(seen) == 3 && !seen[-1]
	})
	prod := c.client(kgo.TransactionalID("tx-across"), kgo.DefaultProduceTopic("tx"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for round, commit := range []bool{true, false, true} {
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for part := int32(0); part < 3; part++ {
			key := fmt.Sprintf("r%d-p%d", round, part)
			if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte(key), Partition: part}).FirstErr(); err != nil {
				t.Fatalf("produce %s: %v", key, err)
			}
		}
		if err := prod.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatalf("end transaction %d: %v", round, err)
		}
	}
	got := consumeKeys(t, c.client(kgo.FetchIsolationLevel(kgo.ReadCommitted())), "tx", 6)
	for round, commit := range []bool{true, false, true} {
		for part := 0; part < 3; part++ {
			key := fmt.Sprintf("r%d-p%d", round, part)
			if got[key] != commit {
				t.Errorf("%s: read_committed sees it = %v, want %v", key, got[key], commit)
			}
		}
	}
}

// A --roles controller node votes in the quorum but hosts nothing: brokers
// place replicas only on themselves, and the cluster keeps working with it
// as one of three voters.
func TestReplicationControllerOnlyNode(t *testing.T) {
	var voters []string
	raft := make([]string, 3)
	for i := range raft {
		raft[i] = freeLoopbackAddr(t)
		voters = append(voters, fmt.Sprintf("%d@%s", i+1, raft[i]))
	}
	cfgFor := func(id int) Config {
		cfg := DefaultConfig()
		cfg.NodeID = int32(id)
		cfg.DataDir = t.TempDir()
		cfg.Listen = freeLoopbackAddr(t)
		cfg.HTTPListen = ""
		cfg.ControllerQuorumVoters = strings.Join(voters, ",")
		cfg.ControllerListen = raft[id-1]
		return cfg
	}
	ctrlCfg := cfgFor(3)
	ctrlCfg.ProcessRoles = "controller"
	ctrlCfg.HTTPListen = "127.0.0.1:0"
	if _, err := NewServer(ctrlCfg, nil); err == nil {
		t.Fatal("NewServer accepted --roles controller")
	}
	c := &testCluster{t: t}
	for id := 1; id <= 2; id++ {
		c.nodes = append(c.nodes, &testBroker{t: t, cfg: cfgFor(id)})
	}
	var ctrl *ControllerNode
	var ctrlErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctrl, ctrlErr = NewControllerNode(ctrlCfg, nil)
	}()
	c.startAll()
	<-done
	if ctrlErr != nil {
		t.Fatal(ctrlErr)
	}
	t.Cleanup(func() {
		for _, nb := range c.nodes {
			nb.stop()
		}
		ctrl.Close()
	})
	ctx := testContext(t)
	adm := kadm.NewClient(c.client())
	if res, err := adm.CreateTopic(ctx, 4, 3, nil, "three"); err == nil && res.Err == nil {
		t.Fatal("RF=3 accepted with two brokers")
	}
	if res, err := adm.CreateTopic(ctx, 4, 2, nil, "two"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	md, err := adm.Metadata(ctx, "two")
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Brokers) != 2 {
		t.Errorf("metadata lists %d brokers, want 2", len(md.Brokers))
	}
	for _, p := range md.Topics["two"].Partitions {
		for _, r := range p.Replicas {
			if r == 3 {
				t.Errorf("partition %d has a replica on the controller-only node", p.Partition)
			}
		}
	}
	if md.Controller != 1 && md.Controller != 2 {
		t.Errorf("controller %d is not a broker", md.Controller)
	}
	cl := c.client(kgo.DefaultProduceTopic("two"), kgo.RequiredAcks(kgo.AllISRAcks()))
	for i := range 50 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: fmt.Appendf(nil, "k%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if got := consumeKeys(t, c.client(), "two", 50); len(got) != 50 {
		t.Fatalf("read %d keys", len(got))
	}
}

// A --roles broker node follows the quorum as an observer: it registers,
// hosts replicas, leads partitions and fails over like any broker, without
// a vote.
func TestReplicationBrokerOnlyNode(t *testing.T) {
	c := startTestCluster(t, 3)
	b4 := c.addBrokerOnly(4)
	ctx := testContext(t)
	adm := kadm.NewClient(c.client())
	waitUntil(t, 10*time.Second, "four brokers", func() bool {
		md, err := adm.Metadata(ctx)
		return err == nil && len(md.Brokers) == 4
	})
	if res, err := adm.CreateTopic(ctx, 4, 3, map[string]*string{"min.insync.replicas": ptr("2")}, "obs"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	var md kadm.Metadata
	waitUntil(t, 10*time.Second, "a leader for every partition", func() bool {
		var err error
		md, err = adm.Metadata(ctx, "obs")
		if err != nil || len(md.Topics["obs"].Partitions) != 4 {
			return false
		}
		for _, p := range md.Topics["obs"].Partitions {
			if p.Leader < 0 {
				return false
			}
		}
		return true
	})
	led := false
	for _, p := range md.Topics["obs"].Partitions {
		led = led || p.Leader == 4
	}
	if !led {
		t.Fatalf("the broker-only node leads no partition: %+v", md.Topics["obs"].Partitions)
	}
	cl := c.client(kgo.DefaultProduceTopic("obs"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MetadataMinAge(250*time.Millisecond))
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Key: fmt.Appendf(nil, "k%d", i)}).FirstErr(); err != nil {
				t.Fatalf("produce %d: %v", i, err)
			}
		}
	}
	produce(0, 100)
	b4.stop()
	produce(100, 200) // its partitions moved to voters
	c.startAll()
	waitUntil(t, 30*time.Second, "node 4 back in every ISR", func() bool {
		md, err := adm.Metadata(ctx, "obs")
		if err != nil {
			return false
		}
		for _, p := range md.Topics["obs"].Partitions {
			in := false
			for _, r := range p.ISR {
				in = in || r == 4
			}
			onIt := false
			for _, r := range p.Replicas {
				onIt = onIt || r == 4
			}
			if onIt && !in {
				return false
			}
		}
		return true
	})
	if got := consumeKeys(t, c.client(), "obs", 200); len(got) != 200 {
		t.Fatalf("read %d keys", len(got))
	}
	if _, isObserver := b4.srv.member.(*metadata.Observer); !isObserver {
		t.Error("the broker-only node runs a raft voter")
	}
}
