package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// killSwitch is a dialer for a franz-go client that can "kill -9" it: all
// its connections drop at once and it can never connect again, so it
// neither leaves its group nor ends its transaction — as a crashed process.
type killSwitch struct {
	mu    sync.Mutex
	dead  bool
	conns []net.Conn
}

func (k *killSwitch) dial(ctx context.Context, network, host string) (net.Conn, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.dead {
		return nil, errors.New("killed")
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, network, host)
	if err == nil {
		k.conns = append(k.conns, c)
	}
	return c, err
}

func (k *killSwitch) kill() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.dead = true
	for _, c := range k.conns {
		c.Close()
	}
}

// readTopic reads every partition of topic from the start with the
// isolation level until no record arrives for a quiet second, and counts
// each value.
func readTopic(t *testing.T, tb *testBroker, topic string, committed bool) map[string]int {
	t.Helper()
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl := tb.client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(iso), kgo.FetchMaxWait(100*time.Millisecond))
	defer cl.Close()
	seen := map[string]int{}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := cl.PollFetches(ctx)
		quiet := ctx.Err() != nil
		cancel()
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("fetch: %v", err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++ })
		if quiet && fs.NumRecords() == 0 {
			return seen
		}
	}
}

// transformLoop runs consume-transform-produce on sess until stop says so:
// each transaction takes up to batch records, maps v to "out-"+v and
// commits. midTxn, if set, runs after a transaction's records are produced
// (flushed, so they are in the log) and before it ends; returning true
// abandons the loop there.
func transformLoop(ctx context.Context, sess *kgo.GroupTransactSession, batch int, stop func() bool, midTxn func(committed int) bool) (committed int, err error) {
	for !stop() {
		pollCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		fs := sess.PollRecords(pollCtx, batch)
		cancel()
		if ctx.Err() != nil {
			return committed, ctx.Err()
		}
		if fs.NumRecords() == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			return committed, err
		}
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			sess.Produce(ctx, &kgo.Record{Key: r.Key, Value: append([]byte("out-"), r.Value...)}, nil)
			n++
		})
		if midTxn != nil {
			if err := sess.Client().Flush(ctx); err != nil {
				return committed, err
			}
			if midTxn(committed) {
				return committed, nil
			}
		}
		ok, err := sess.End(ctx, kgo.TryCommit)
		if err != nil {
			return committed, err
		}
		if ok {
			committed += n
		}
	}
	return committed, nil
}

func committedTotal(ctx context.Context, t *testing.T, tb *testBroker, group string) int64 {
	offs, err := tb.admin().FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	offs.Each(func(o kadm.OffsetResponse) { total += max(o.At, 0) })
	return total
}

// TestGroupTransactSessionMemberKilled: two members of one group run
// franz-go's GroupTransactSession; one is killed (connections dropped, no
// LeaveGroup, no EndTxn) in the middle of a transaction whose records are
// already in the output log. The survivor takes over its partitions once
// the group evicts it, the coordinator aborts the orphaned transaction at
// its timeout, and the read_committed output holds every input record
// exactly once while read_uncommitted shows the aborted duplicates.
func TestGroupTransactSessionMemberKilled(t *testing.T) {
	tb := startTestBroker(t, func(c *Config) {
		c.GroupInitialRebalanceDelayMs = 0
		c.GroupMinSessionTimeoutMs = 1000
	})
	tb.createTopic("kill-in", 4, nil)
	tb.createTopic("kill-out", 2, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const n = 2000
	in := tb.client(kgo.DefaultProduceTopic("kill-in"))
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Key: []byte(fmt.Sprint(i % 16)), Value: []byte(fmt.Sprintf("v%04d", i))})
	}
	if err := in.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	session := func(id string, dialer func(ctx context.Context, network, host string) (net.Conn, error)) *kgo.GroupTransactSession {
		opts := []kgo.Opt{
			kgo.SeedBrokers(tb.addr()), kgo.TransactionalID(id), kgo.DefaultProduceTopic("kill-out"),
			kgo.ConsumerGroup("kill-group"), kgo.ConsumeTopics("kill-in"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.RequireStableFetchOffsets(),
			kgo.SessionTimeout(2 * time.Second), kgo.HeartbeatInterval(200 * time.Millisecond),
			kgo.TransactionTimeout(3 * time.Second), kgo.RetryTimeout(30 * time.Second),
		}
		if dialer != nil {
			opts = append(opts, kgo.Dialer(dialer))
		}
		sess, err := kgo.NewGroupTransactSession(opts...)
		if err != nil {
			t.Fatal(err)
		}
		return sess
	}

	survivor := session("kill-a", nil)
	defer survivor.Close()
	ks := &killSwitch{}
	victim := session("kill-b", ks.dial)

	var wg sync.WaitGroup
	var victimCommitted int
	var victimErr error
	killed := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		victimCommitted, victimErr = transformLoop(ctx, victim, 50, func() bool { return false }, func(committed int) bool {
			if committed == 0 {
				return false // kill only after a committed transaction
			}
			ks.kill()
			close(killed)
			return true
		})
	}()
	survivorDone := func() bool {
		select {
		case <-killed:
		default:
			return false
		}
		return committedTotal(ctx, t, tb, "kill-group") >= n
	}
	survivorCommitted, err := transformLoop(ctx, survivor, 50, survivorDone, nil)
	if err != nil {
		t.Fatalf("survivor: %v (committed %d)", err, survivorCommitted)
	}
	wg.Wait()
	if victimErr != nil {
		t.Fatalf("victim before its kill: %v", victimErr)
	}
	if victimCommitted == 0 || survivorCommitted == 0 {
		t.Fatalf("victim committed %d, survivor %d: both should have done work", victimCommitted, survivorCommitted)
	}
	// The victim's client is dead; close it without waiting on the broker.
	closeCtx, closeCancel := context.WithTimeout(context.Background(), time.Second)
	_ = victim.Client().AbortBufferedRecords(closeCtx)
	closeCancel()
	go victim.Close()

	// The orphaned transaction is aborted at its timeout, so the output's
	// last stable offsets reach the end.
	waitFor(t, 30*time.Second, "the killed member's transaction to be aborted", func() bool {
		for i := range int32(2) {
			p := tb.srv.topics.partition("kill-out", i)
			if p.LastStableOffset() != p.HighWatermark() {
				return false
			}
		}
		return true
	})
	committedOut := readTopic(t, tb, "kill-out", true)
	for i := range n {
		if v := fmt.Sprintf("out-v%04d", i); committedOut[v] != 1 {
			t.Fatalf("%s appears %d times in the read_committed output (want exactly once)", v, committedOut[v])
		}
	}
	if len(committedOut) != n {
		t.Fatalf("read_committed output has %d distinct values, want %d", len(committedOut), n)
	}
	all := readTopic(t, tb, "kill-out", false)
	dups := 0
	for _, c := range all {
		if c > 1 {
			dups++
		}
	}
	if dups == 0 {
		t.Fatal("read_uncommitted shows no duplicate: the victim was not killed inside a transaction with records written")
	}
	t.Logf("victim committed %d records before its kill, survivor %d; %d records of the aborted transaction visible to read_uncommitted only", victimCommitted, survivorCommitted, dups)
}
