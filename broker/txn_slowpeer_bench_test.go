package broker

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkTxnSlowPeer: a three-node cluster whose node 3 is slow — 2 s
// added to every request on its Kafka listener (a delaying proxy it
// advertises), so WriteTxnMarkers to it, and replication of the partitions
// it leads, take seconds. Transactional producers (franz-go) commit in a
// loop, one record per transaction:
//
//   - slow: transactions of one __transaction_state shard (led by node 1)
//     on a partition node 3 leads — their markers wait for node 3 (raw
//     AddPartitionsToTxn + EndTxn, no produce, so they spend their time
//     ending transactions);
//   - same-shard: transactions of that same shard on a partition node 1
//     or 2 leads;
//   - other-shard: transactions of other shards (led by nodes 1 and 2) on
//     partitions nodes 1 and 2 lead.
//
// Each of the two sub-benchmarks measures the same producers for a fixed
// window, first without the delay, then with it, and reports each class's
// commits/s: with no lock held across marker writes, same-shard and
// other-shard commit at the same rate in both (only "slow" drops).
//
//	go test -run '^$' -bench TxnSlowPeer -benchtime 1x ./broker/
func BenchmarkTxnSlowPeer(b *testing.B) {
	const (
		slowDelay = 2 * time.Second
		window    = 12 * time.Second
	)
	var proxy *delayProxy
	c := startTestCluster(b, 3, func(cfg *Config) {
		if cfg.NodeID == 3 {
			proxy = newDelayProxy(b, cfg.Listen)
			cfg.Advertise = proxy.addr()
		}
	})
	node1 := c.node(1).srv
	ctx := context.Background()

	// __transaction_state and a data topic, every partition with a leader.
	if len(node1.txns.ensureTopic()) == 0 {
		b.Fatal("no " + transactionStateTopic)
	}
	admin := c.client()
	const dataPartitions = 9
	if _, err := kadm.NewClient(admin).CreateTopic(ctx, dataPartitions, 3, nil, "slowpeer"); err != nil {
		b.Fatal(err)
	}
	leaderOf := func(topic string, p int) int32 {
		t, ok := node1.clusterState().Topic(topic)
		if !ok || p >= len(t.Partitions) {
			return -1
		}
		return t.Partitions[p].Leader
	}
	waitUntil(b, 30*time.Second, "leaders everywhere", func() bool {
		for p := range dataPartitions {
			if leaderOf("slowpeer", p) <= 0 {
				return false
			}
		}
		for p := range int(node1.cfg.TransactionStateLogNumPartitions) {
			if leaderOf(transactionStateTopic, p) <= 0 {
				return false
			}
		}
		return true
	})

	// Pick the shard (led by node 1) and the transactional ids.
	numShards := int(node1.cfg.TransactionStateLogNumPartitions)
	shardLeader := func(id string) (int32, int32) {
		s := groupPartition(id, numShards)
		return s, leaderOf(transactionStateTopic, int(s))
	}
	slowShard := int32(-1)
	for s := range numShards {
		if leaderOf(transactionStateTopic, s) == 1 {
			slowShard = int32(s)
			break
		}
	}
	var slowPart, fastParts []int32
	for p := range dataPartitions {
		if leaderOf("slowpeer", p) == 3 {
			slowPart = append(slowPart, int32(p))
		} else {
			fastParts = append(fastParts, int32(p))
		}
	}
	if slowShard < 0 || len(slowPart) == 0 || len(fastParts) < 2 {
		b.Fatalf("layout: shard %d, node-3 partitions %v, others %v", slowShard, slowPart, fastParts)
	}
	pick := func(prefix string, n int, want func(shard, leader int32) bool) []string {
		var ids []string
		for i := 0; len(ids) < n; i++ {
			id := fmt.Sprintf("%s-%d", prefix, i)
			if want(shardLeader(id)) {
				ids = append(ids, id)
			}
		}
		return ids
	}
	inSlowShard := func(shard, _ int32) bool { return shard == slowShard }
	elsewhere := func(shard, leader int32) bool { return shard != slowShard && (leader == 1 || leader == 2) }
	type class struct {
		name  string
		ids   []string
		parts []int32
	}
	classes := []class{
		{"slow", pick("slow", 2, inSlowShard), slowPart},
		{"same-shard", pick("same", 2, inSlowShard), fastParts},
		{"other-shard", pick("other", 4, elsewhere), fastParts},
	}
	seeds := []string{c.node(1).cfg.Listen, c.node(2).cfg.Listen}
	type producer struct {
		cl        *kgo.Client
		id        string
		partition int32
	}
	producers := make([][]producer, len(classes))
	for ci, cls := range classes {
		for i, id := range cls.ids {
			cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.TransactionalID(id),
				kgo.DefaultProduceTopic("slowpeer"), kgo.RecordPartitioner(kgo.ManualPartitioner()),
				kgo.ProducerLinger(0), kgo.RetryTimeout(60*time.Second), kgo.TransactionTimeout(60*time.Second))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(cl.Close)
			producers[ci] = append(producers[ci], producer{cl: cl, id: id, partition: cls.parts[i%len(cls.parts)]})
		}
	}
	// The slow class skips producing (a produce to node 3 takes seconds
	// too): it adds the node-3 partition and commits with raw requests,
	// which franz-go routes to the coordinator, so its time goes to
	// EndTxn and the markers.
	slowPIDs := map[*kgo.Client][2]int64{}
	for ci, cls := range classes {
		if cls.name != "slow" {
			continue
		}
		for i, p := range producers[ci] {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.TransactionalID, req.TransactionTimeoutMillis = &cls.ids[i], 60000
			resp, err := req.RequestWith(ctx, p.cl)
			if err == nil {
				err = kerr.ErrorForCode(resp.ErrorCode)
			}
			if err != nil {
				b.Fatal(err)
			}
			slowPIDs[p.cl] = [2]int64{resp.ProducerID, int64(resp.ProducerEpoch)}
		}
	}
	slowCommit := func(p producer, id string) error {
		pid := slowPIDs[p.cl]
		for {
			req := kmsg.NewPtrAddPartitionsToTxnRequest()
			req.Version = 3
			req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid[0], int16(pid[1])
			rt := kmsg.NewAddPartitionsToTxnRequestTopic()
			rt.Topic, rt.Partitions = "slowpeer", []int32{p.partition}
			req.Topics = append(req.Topics, rt)
			resp, err := req.RequestWith(ctx, p.cl)
			if err != nil {
				return err
			}
			code := resp.Topics[0].Partitions[0].ErrorCode
			if code == kerr.ConcurrentTransactions.Code {
				time.Sleep(20 * time.Millisecond) // the previous markers are still going out
				continue
			}
			if err := kerr.ErrorForCode(code); err != nil {
				return err
			}
			break
		}
		end := kmsg.NewPtrEndTxnRequest()
		end.Version = 3
		end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, pid[0], int16(pid[1]), true
		resp, err := end.RequestWith(ctx, p.cl)
		if err != nil {
			return err
		}
		return kerr.ErrorForCode(resp.ErrorCode)
	}
	commit := func(p producer) error {
		if _, ok := slowPIDs[p.cl]; ok {
			return slowCommit(p, p.id)
		}
		if err := p.cl.BeginTransaction(); err != nil {
			return err
		}
		if err := p.cl.ProduceSync(ctx, &kgo.Record{Partition: p.partition, Value: []byte("v")}).FirstErr(); err != nil {
			_ = p.cl.EndTransaction(ctx, kgo.TryAbort)
			return err
		}
		return p.cl.EndTransaction(ctx, kgo.TryCommit)
	}
	// Warm up: every producer initialised and through one commit.
	for _, ps := range producers {
		for _, p := range ps {
			if err := commit(p); err != nil {
				b.Fatal(err)
			}
		}
	}

	measure := func(b *testing.B, delay time.Duration) {
		proxy.delay.Store(int64(delay))
		time.Sleep(100 * time.Millisecond)
		counts := make([]atomic.Int64, len(classes))
		var failures atomic.Int64
		var lastErr atomic.Value
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for ci, ps := range producers {
			for _, p := range ps {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						if err := commit(p); err != nil {
							failures.Add(1)
							lastErr.Store(err)
							continue
						}
						counts[ci].Add(1)
					}
				}()
			}
		}
		time.Sleep(window)
		snapshot := make([]int64, len(classes))
		for ci := range classes {
			snapshot[ci] = counts[ci].Load()
		}
		close(stop)
		wg.Wait() // the slow ones finish their transaction
		for ci, cls := range classes {
			b.ReportMetric(float64(snapshot[ci])/window.Seconds(), cls.name+"-commits/s")
		}
		if n := failures.Load(); n > 0 {
			b.Logf("%d failed transactions; last: %v", n, lastErr.Load())
		}
		proxy.delay.Store(0)
	}
	b.Run("no-slow-peer", func(b *testing.B) { measure(b, 0) })
	b.Run("slow-peer", func(b *testing.B) { measure(b, slowDelay) })
}

// delayProxy forwards connections to target, holding every byte sent to
// target for delay (read at the time it arrives) while keeping the order
// and letting requests pipeline: it adds latency, not a throughput limit.
type delayProxy struct {
	ln     net.Listener
	target string
	delay  atomic.Int64 // nanoseconds

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func newDelayProxy(t testing.TB, target string) *delayProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &delayProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *delayProxy) addr() string { return p.ln.Addr().String() }

func (p *delayProxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, client, server)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			p.forwardDelayed(client, server)
		}()
		go func() {
			defer p.wg.Done()
			_, _ = io.Copy(client, server)
			client.Close()
		}()
	}
}

type delayedChunk struct {
	due  time.Time
	data []byte
}

func (p *delayProxy) forwardDelayed(client, server net.Conn) {
	chunks := make(chan delayedChunk, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		failed := false
		for c := range chunks {
			if failed {
				continue // drain, so the reader never blocks
			}
			if d := time.Until(c.due); d > 0 {
				time.Sleep(d)
			}
			if _, err := server.Write(c.data); err != nil {
				failed = true
				client.Close()
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			chunks <- delayedChunk{due: time.Now().Add(time.Duration(p.delay.Load())), data: append([]byte(nil), buf[:n]...)}
		}
		if err != nil {
			break // EOF, or closed by close()
		}
	}
	close(chunks)
	<-done
	server.Close()
}

func (p *delayProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
