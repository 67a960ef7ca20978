package e2e

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/internal/brokertest"
)

// failoverGapRounds is how many times TestClusterFailoverGapDefaults
// crashes a leader (about 6 s a round).
const failoverGapRounds = 10

// maxCrashGap bounds the gap when the crashed leader was not the controller.
const maxCrashGap = 2 * time.Second

// maxMedianCrashGap bounds the median gap over every round.
const maxMedianCrashGap = time.Second

// minMetadataAge is franz-go's default metadata.min.age and a margin.
const minMetadataAge = 5*time.Second + 300*time.Millisecond

// TestClusterFailoverGapDefaults measures the failover gap as a user with
// franz-go's DEFAULT settings sees it (acks=all, metadata.min.age 5 s, no
// tuning): the longest time without an acknowledgement while the leader
// of the producer's partition is crashed with SIGKILL, over several rounds
// (the victim is restarted and rejoins the ISR between rounds). Every
// acknowledged record must be in the log exactly once.
func TestClusterFailoverGapDefaults(t *testing.T) {
	const topic = "failover-gap"
	// No preferred-leader rebalance: its leader moves between rounds would
	// be metadata refreshes the spacing below does not see.
	c := startCluster(t, "--set", "auto.leader.rebalance.enable=false")
	probe := newClusterProbe(t, c)
	adm := clusterAdmin(t, c.Addrs())
	createReplicatedTopic(t, adm, topic, 1, clusterSize, nil)
	waitReplicated(t, probe, allNodes(), topic, 1, clusterSize)

	// Defaults only: the partitioner is manual so records stay on the
	// partition whose leader is crashed; nothing about metadata or retries.
	// The hook only watches when the client refreshed its metadata.
	refreshes := &metadataRefreshes{}
	clog := &clientLog{}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.WithHooks(refreshes), kgo.WithLogger(clog))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	prod := startSteadyProducerWith(t, cl, topic, 1, 5*time.Millisecond, 64)
	warmup := time.Now()
	brokertest.WaitFor(t, failoverWait, "the producer's first acks", func() bool {
		_, ok := prod.ackedSince(0, warmup)
		return ok
	})

	var gaps []time.Duration
	for round := 1; round <= failoverGapRounds; round++ {
		// franz-go refreshes metadata at most every metadata.min.age (5 s
		// by default): a crash within 5 s of the previous refresh costs up
		// to 5 s whatever the brokers do. A real producer's last refresh is
		// usually older (metadata.max.age is 5 min), so each crash comes
		// at least that long after the client's last refresh (a refresh
		// during the wait pushes it further).
		for wait := time.Until(refreshes.last().Add(minMetadataAge)); wait > 0; wait = time.Until(refreshes.last().Add(minMetadataAge)) {
			time.Sleep(wait)
		}
		before := probe.mustView(t, allNodes()[round%clusterSize], topic)
		old, ok := before.partition(topic, 0)
		if !ok || old.Leader < 1 {
			t.Fatalf("round %d: no leader: %+v", round, before.Topics[topic])
		}
		victim := old.Leader
		role := "leader"
		wasController := victim == before.Controller
		if wasController {
			role = "leader and controller"
		}
		killedAt := time.Now()
		c.Kill(victim)
		survivors := otherNodes(victim)
		next := waitNewLeader(t, probe, survivors, topic, 0, victim, old.LeaderEpoch)
		elected := time.Since(killedAt)
		var resumed time.Time
		var last string
		waitForCluster(t, failoverWait, "acks after the crash", &last, func() (bool, string) {
			var ok bool
			if resumed, ok = prod.ackedSince(0, killedAt.Add(time.Millisecond)); ok {
				return true, ""
			}
			return false, prod.describe(probe, survivors, topic)
		})
		gap := prod.longestGap(0, killedAt, resumed)
		gaps = append(gaps, gap)
		// A crashed leader that was not the controller is fenced within
		// ~100 ms of the refusal (measured 60-260 ms on 2 loaded cores);
		// the target is 1 s, the bound leaves a margin. When the
		// controller crashes too, a raft election comes first: those
		// rounds are logged, not asserted (see the commit notes).
		// Time the client slept retrying its metadata on the crashed
		// broker it picked is its own (deadBrokerBackoff).
		slept := clog.deadBrokerBackoff(killedAt, resumed)
		if !wasController && gap-slept > maxCrashGap {
			t.Errorf("round %d: failover gap %s (%s of it the client's backoff on the crashed broker) after crashing leader %d (not the controller), want under %s; the client's log from the crash:%s", round, gap.Round(time.Millisecond), slept.Round(time.Millisecond), victim, maxCrashGap, clog.between(killedAt.Add(-20*time.Millisecond), resumed))
		}
		t.Logf("round %d: failover gap %s (crashed node %d, %s; new leader %d, epoch %d, seen by the survivors %s after the crash; the client's backoff on the crashed broker %s)", round, gap.Round(time.Millisecond), victim, role, next.Leader, next.LeaderEpoch, elected.Round(time.Millisecond), slept.Round(time.Millisecond))
		c.Restart(victim)
		waitReplicated(t, probe, allNodes(), topic, 1, clusterSize)
	}
	sorted := slices.Clone(gaps)
	slices.Sort(sorted)
	median := sorted[len(sorted)/2]
	t.Logf("failover gaps over %d rounds: median %s, max %s, all %v", len(gaps), median.Round(time.Millisecond), sorted[len(sorted)-1].Round(time.Millisecond), roundAll(gaps))
	// The target for a process crash is under 1 s: the median
	// holds it to that (every round is held to maxCrashGap above, which
	// leaves room for a loaded CI machine's slowest round).
	if median > maxMedianCrashGap {
		t.Errorf("median failover gap %s, want under %s", median.Round(time.Millisecond), maxMedianCrashGap)
	}

	acks, failed, firstErr := prod.stop(t)
	t.Logf("%d records acked, %d failed (first error: %v)", len(acks), failed, firstErr)
	if len(acks) < 300 {
		t.Fatalf("only %d records acked; the producer barely ran", len(acks))
	}
	checkNoAckedLoss(t, acks, consumeAll(t, c.Addrs(), topic, 1))
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}

// metadataRefreshes records when the client last received a Metadata
// response (a kgo hook: it changes no setting).
type metadataRefreshes struct {
	mu sync.Mutex
	at time.Time
}

func (m *metadataRefreshes) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	if key != int16(kmsg.Metadata) || e2e.Err() != nil {
		return
	}
	m.mu.Lock()
	m.at = time.Now()
	m.mu.Unlock()
}

func (m *metadataRefreshes) last() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.at
}

// clientLog keeps the client's own log lines (kgo's debug level) so that a
// slow round can show what the client saw and did: which broker answered
// its metadata, which leader it named, which errors the produce got.
type clientLog struct {
	mu    sync.Mutex
	lines []clientLogLine
}

type clientLogLine struct {
	at      time.Time
	level   kgo.LogLevel
	msg     string
	keyvals []any
}

func (l *clientLog) Level() kgo.LogLevel { return kgo.LogLevelDebug }

func (l *clientLog) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	// Half a minute is plenty for one round.
	if len(l.lines) > 0 && now.Sub(l.lines[0].at) > time.Minute {
		cut := 0
		for cut < len(l.lines) && now.Sub(l.lines[cut].at) > 30*time.Second {
			cut++
		}
		l.lines = slices.Delete(l.lines, 0, cut)
	}
	l.lines = append(l.lines, clientLogLine{at: now, level: level, msg: msg, keyvals: keyvals})
}

// between returns the lines logged from a to b, each with its offset from a.
func (l *clientLog) between(a, b time.Time) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var sb strings.Builder
	for _, ln := range l.lines {
		if ln.at.Before(a) || ln.at.After(b) {
			continue
		}
		fmt.Fprintf(&sb, "\n  +%s %s %s", ln.at.Sub(a).Round(time.Millisecond), ln.level, ln.msg)
		for i := 0; i+1 < len(ln.keyvals); i += 2 {
			fmt.Fprintf(&sb, " %v=%v", ln.keyvals[i], ln.keyvals[i+1])
		}
	}
	return sb.String()
}

// deadBrokerBackoff is how long, from a to b, the client chose to sleep
// before retrying a Metadata request whose broker refused the connection:
// kgo picks the broker for each try itself and may pick the crashed one
// again (seen three times in a row: 2 s of backoff), time no broker can
// shorten.
func (l *clientLog) deadBrokerBackoff(a, b time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var total time.Duration
	for _, ln := range l.lines {
		if ln.at.Before(a) || ln.at.After(b) || ln.msg != "retrying request" {
			continue
		}
		kv := map[string]any{}
		for i := 0; i+1 < len(ln.keyvals); i += 2 {
			if k, ok := ln.keyvals[i].(string); ok {
				kv[k] = ln.keyvals[i+1]
			}
		}
		reqErr, _ := kv["request_error"].(error)
		backoff, _ := kv["backoff"].(time.Duration)
		if fmt.Sprint(kv["request"]) == "Metadata" && errors.Is(reqErr, syscall.ECONNREFUSED) {
			total += backoff
		}
	}
	return total
}
