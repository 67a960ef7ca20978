package streams_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/streams"
)

// committedReader reads a topic's committed records from the start.
type committedReader struct {
	cl   *kgo.Client
	recs []*kgo.Record
}

func newCommittedReader(t *testing.T, addr, topic string) *committedReader {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &committedReader{cl: cl}
}

// until reads until n records arrived in all, failing after timeout.
func (r *committedReader) until(t *testing.T, n int, timeout time.Duration) []*kgo.Record {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for len(r.recs) < n {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %d of %d records", timeout, len(r.recs), n)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		r.cl.PollFetches(ctx).EachRecord(func(rec *kgo.Record) { r.recs = append(r.recs, rec) })
		cancel()
	}
	return r.recs
}

var joinBase = time.UnixMilli(1_700_000_000_000)

// TestStreamTableJoinExactlyOnceOverBroker: clicks enriched with a users
// table (left join) under exactly-once, the table updated and partly
// deleted mid-stream: each click is enriched exactly once with the user
// value the reference computation gives for when it was produced (the
// test waits for the table's changelog between phases, so every table
// update is processed before the clicks that follow it); a second
// instance without the state directory takes over half way through the
// second phase.
func TestStreamTableJoinExactlyOnceOverBroker(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "users", 3)
	createTopic(t, b.Addr, "clicks", 3)
	createTopic(t, b.Addr, "enriched", 3)
	top := streams.NewTopology()
	users := streams.TableFrom(top, streams.String, streams.String, "users", streams.Named("users"))
	clicks := streams.From(top, streams.String, streams.String, []string{"clicks"})
	streams.LeftJoinTable(clicks, users, func(_ string, click string, user *string) (string, error) {
		if user == nil {
			return click + "@?", nil
		}
		return click + "@" + *user, nil
	}).To("enriched", streams.String, streams.String)
	stateDir := t.TempDir()
	newApp := func() *streams.App {
		app, err := streams.NewApp(top, streams.Brokers(b.Addr), streams.ApplicationID("enrich"),
			streams.StateDir(stateDir), streams.WithGuarantee(streams.ExactlyOnceV2), streams.Logger(testLogger(t)))
		if err != nil {
			t.Fatal(err)
		}
		return app
	}
	stop := runApp(t, newApp())
	changelog := newCommittedReader(t, b.Addr, "enrich-users-changelog")
	out := newCommittedReader(t, b.Addr, "enriched")

	table := map[string]string{} // the reference: the table as of now
	want := map[string]string{}  // click value → enriched value
	const users0, clicksPerPhase = 40, 1000
	produceUsers := func(from, to int, value func(i int) []byte) {
		t.Helper()
		err := produceEach(b.Addr, from, to, func(i int) *kgo.Record {
			k := fmt.Sprintf("u%d", i)
			v := value(i)
			if v == nil {
				delete(table, k)
			} else {
				table[k] = string(v)
			}
			return &kgo.Record{Topic: "users", Key: []byte(k), Value: v, Timestamp: joinBase}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	produceClicks := func(from, to int) {
		t.Helper()
		err := produceEach(b.Addr, from, to, func(i int) *kgo.Record {
			k, v := fmt.Sprintf("u%d", i%50), fmt.Sprintf("c%d", i)
			if u, ok := table[k]; ok {
				want[v] = v + "@" + u
			} else {
				want[v] = v + "@?"
			}
			return &kgo.Record{Topic: "clicks", Key: []byte(k), Value: []byte(v), Timestamp: joinBase.Add(time.Duration(i) * time.Millisecond)}
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	t0 := time.Now()
	produceUsers(0, users0, func(i int) []byte { return fmt.Appendf(nil, "v1-%d", i) })
	changelog.until(t, users0, 30*time.Second)
	produceClicks(0, clicksPerPhase)
	out.until(t, clicksPerPhase, 30*time.Second)
	// Mid-stream: u0..u19 change, u30..u34 are deleted.
	produceUsers(0, 20, func(i int) []byte { return fmt.Appendf(nil, "v2-%d", i) })
	produceUsers(30, 35, func(int) []byte { return nil })
	changelog.until(t, users0+25, 30*time.Second)
	produceClicks(clicksPerPhase, 3*clicksPerPhase/2)
	out.until(t, 3*clicksPerPhase/2, 30*time.Second)
	// A new instance without the state directory restores the table from
	// its changelog before it enriches the rest (only clicks arrive).
	stop()
	if err := os.RemoveAll(filepath.Join(stateDir, "enrich")); err != nil {
		t.Fatal(err)
	}
	second := newApp()
	runApp(t, second)
	produceClicks(3*clicksPerPhase/2, 2*clicksPerPhase)
	recs := out.until(t, 2*clicksPerPhase, 30*time.Second)
	t.Logf("%d clicks enriched in %v", len(recs), time.Since(t0))
	if st := second.Stats(); st.RestoredRecords != users0+25 {
		t.Errorf("restored %d records, want the table's %d changelog records", st.RestoredRecords, users0+25)
	}

	got := map[string]string{}
	for _, r := range recs {
		click, _, _ := strings.Cut(string(r.Value), "@")
		if prev, dup := got[click]; dup {
			t.Fatalf("click %s enriched twice: %q and %q", click, prev, r.Value)
		}
		got[click] = string(r.Value)
	}
	var diffs []string
	for click, w := range want {
		if got[click] != w {
			diffs = append(diffs, fmt.Sprintf("%s: got %q want %q", click, got[click], w))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Fatalf("%d clicks differ from the reference, e.g. %v", len(diffs), diffs[:min(5, len(diffs))])
	}
}

// TestStreamStreamJoinOverBroker: orders joined with payments of the same
// key within ±100 ms (grace an hour, so no record is late whatever order
// the two topics are fetched in) give exactly the pairs a nested loop
// over both inputs gives.
func TestStreamStreamJoinOverBroker(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "orders", 3)
	createTopic(t, b.Addr, "payments", 3)
	createTopic(t, b.Addr, "paid", 3)
	const n, keys = 1000, 37
	orderTS := func(i int) time.Time { return joinBase.Add(time.Duration(i) * 10 * time.Millisecond) }
	paymentTS := func(j int) time.Time { return joinBase.Add(time.Duration(j)*10*time.Millisecond + 37*time.Millisecond) }
	orderKey := func(i int) string { return fmt.Sprintf("k%d", i%keys) }
	paymentKey := func(j int) string { return fmt.Sprintf("k%d", j*7%keys) }
	if err := produceEach(b.Addr, 0, n, func(i int) *kgo.Record {
		return &kgo.Record{Topic: "orders", Key: []byte(orderKey(i)), Value: fmt.Appendf(nil, "o%d", i), Timestamp: orderTS(i)}
	}); err != nil {
		t.Fatal(err)
	}
	if err := produceEach(b.Addr, 0, n, func(j int) *kgo.Record {
		return &kgo.Record{Topic: "payments", Key: []byte(paymentKey(j)), Value: fmt.Appendf(nil, "p%d", j), Timestamp: paymentTS(j)}
	}); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for i := range n {
		for j := range n {
			d := paymentTS(j).Sub(orderTS(i))
			if orderKey(i) == paymentKey(j) && d >= -100*time.Millisecond && d <= 100*time.Millisecond {
				want[fmt.Sprintf("%s=o%d+p%d", orderKey(i), i, j)] = true
			}
		}
	}

	top := streams.NewTopology()
	orders := streams.From(top, streams.String, streams.String, []string{"orders"})
	payments := streams.From(top, streams.String, streams.String, []string{"payments"})
	streams.JoinStreams(orders, payments,
		streams.JoinWindows{Before: 100 * time.Millisecond, After: 100 * time.Millisecond, Grace: time.Hour},
		streams.StreamJoined[string, string, string]{Keys: streams.String, LeftValues: streams.String, RightValues: streams.String},
		func(_ string, o, p string) (string, error) { return o + "+" + p, nil }).
		To("paid", streams.String, streams.String)
	app, err := streams.NewApp(top, streams.Brokers(b.Addr), streams.ApplicationID("paid"),
		streams.StateDir(t.TempDir()), streams.CommitInterval(200*time.Millisecond), streams.Logger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	runApp(t, app)
	recs := newCommittedReader(t, b.Addr, "paid").until(t, len(want), 60*time.Second)
	t.Logf("%d pairs joined in %v", len(recs), time.Since(t0))
	got := map[string]bool{}
	for _, r := range recs {
		s := string(r.Key) + "=" + string(r.Value)
		if got[s] || !want[s] {
			t.Fatalf("unexpected or repeated pair %s", s)
		}
		got[s] = true
	}
	if st := app.Stats(); st.LateDropped != 0 {
		t.Fatalf("%d records dropped as late", st.LateDropped)
	}
}

// TestJoinNeedsCoPartitionedTopics: Run fails at start, naming both
// topics and their partition counts, when a join's inputs differ.
func TestJoinNeedsCoPartitionedTopics(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "accounts", 2)
	createTopic(t, b.Addr, "events", 3)
	top := streams.NewTopology()
	accounts := streams.TableFrom(top, streams.String, streams.String, "accounts")
	events := streams.From(top, streams.String, streams.String, []string{"events"})
	streams.JoinTable(events, accounts, func(_ string, e, a string) (string, error) { return e + a, nil }).
		To("joined", streams.String, streams.String)
	app, err := streams.NewApp(top, streams.Brokers(b.Addr), streams.ApplicationID("copart"), streams.StateDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = app.Run(ctx)
	if !errors.Is(err, streams.ErrNotCoPartitioned) || !strings.Contains(err.Error(), "accounts (2), events (3)") {
		t.Fatalf("Run: %v", err)
	}
}

// TestGlobalTableOverBroker: a global table over 3 partitions joined with
// a 2-partition stream (no co-partitioning needed) is restored completely
// before the first record is processed; a second instance with the same
// state directory resumes it from its stored offsets (picking up the
// updates and deletes made while no App ran), and a running instance
// follows later updates.
func TestGlobalTableOverBroker(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "products", 3)
	createTopic(t, b.Addr, "purchases", 2)
	createTopic(t, b.Addr, "priced", 2)
	top := streams.NewTopology()
	products := streams.GlobalTableFrom(top, streams.String, streams.String, "products", streams.Named("products"))
	purchases := streams.From(top, streams.String, streams.String, []string{"purchases"})
	streams.LeftJoinGlobal(purchases, products,
		func(_ string, v string) (string, error) { p, _, _ := strings.Cut(v, "/"); return p, nil },
		func(_ string, v string, price *string) (string, error) {
			if price == nil {
				return v + "=?", nil
			}
			return v + "=" + *price, nil
		}).To("priced", streams.String, streams.String)
	stateDir := t.TempDir()
	newApp := func() *streams.App {
		app, err := streams.NewApp(top, streams.Brokers(b.Addr), streams.ApplicationID("pricing"),
			streams.StateDir(stateDir), streams.CommitInterval(200*time.Millisecond), streams.Logger(testLogger(t)))
		if err != nil {
			t.Fatal(err)
		}
		return app
	}
	prices := map[string]string{}
	produceProducts := func(from, to int, price func(i int) []byte) {
		t.Helper()
		if err := produceEach(b.Addr, from, to, func(i int) *kgo.Record {
			k, v := fmt.Sprintf("p%d", i), price(i)
			if v == nil {
				delete(prices, k)
			} else {
				prices[k] = string(v)
			}
			return &kgo.Record{Topic: "products", Key: []byte(k), Value: v}
		}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{}
	producePurchases := func(from, to int) {
		t.Helper()
		if err := produceEach(b.Addr, from, to, func(i int) *kgo.Record {
			p := fmt.Sprintf("p%d", i%120)
			v := fmt.Sprintf("%s/%d", p, i)
			if price, ok := prices[p]; ok {
				want[v] = v + "=" + price
			} else {
				want[v] = v + "=?"
			}
			return &kgo.Record{Topic: "purchases", Key: fmt.Appendf(nil, "c%d", i%7), Value: []byte(v)}
		}); err != nil {
			t.Fatal(err)
		}
	}
	out := newCommittedReader(t, b.Addr, "priced")
	check := func(n int) {
		t.Helper()
		recs := out.until(t, n, 30*time.Second)
		for _, r := range recs {
			v, _, _ := strings.Cut(string(r.Value), "=")
			if want[v] != string(r.Value) {
				t.Fatalf("%s: got %q, want %q", v, r.Value, want[v])
			}
		}
	}

	produceProducts(0, 100, func(i int) []byte { return fmt.Appendf(nil, "%d.00", i) })
	producePurchases(0, 500)
	first := newApp()
	stop := runApp(t, first)
	check(500)
	stop()
	produceProducts(0, 50, func(i int) []byte { return fmt.Appendf(nil, "%d.50", i) })
	produceProducts(90, 100, func(int) []byte { return nil })
	producePurchases(500, 1000)
	second := newApp()
	runApp(t, second)
	check(1000)
	if r1, r2 := first.Stats().RestoredRecords, second.Stats().RestoredRecords; r1 != 100 || r2 != 60 {
		t.Errorf("restored %d then %d records, want 100 (all) then 60 (what changed since)", r1, r2)
	}

	// A running instance follows updates: probe until p7's new price shows.
	produceProducts(7, 8, func(int) []byte { return []byte("new") })
	deadline := time.Now().Add(30 * time.Second)
	for i := 1000; ; i++ {
		if time.Now().After(deadline) {
			t.Fatal("the global table never showed p7's update")
		}
		if err := produceEach(b.Addr, 0, 1, func(int) *kgo.Record {
			return &kgo.Record{Topic: "purchases", Key: []byte("probe"), Value: fmt.Appendf(nil, "p7/%d", i)}
		}); err != nil {
			t.Fatal(err)
		}
		recs := out.until(t, i+1, 30*time.Second)
		if strings.HasSuffix(string(recs[i].Value), "=new") {
			break
		}
	}
}

// TestJoinTasksStayTogetherAcrossInstances: two instances of a stream-table
// join share the work, each owning partition p of both topics (range
// assignment; with 3 partitions the default cooperative-sticky balancer
// splits them), and together enrich every login correctly.
func TestJoinTasksStayTogetherAcrossInstances(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "accounts", 3)
	createTopic(t, b.Addr, "logins", 3)
	createTopic(t, b.Addr, "tagged", 3)
	top := streams.NewTopology()
	accounts := streams.TableFrom(top, streams.String, streams.String, "accounts", streams.Named("accounts"))
	logins := streams.From(top, streams.String, streams.String, []string{"logins"})
	streams.JoinTable(logins, accounts, func(_ string, login, account string) (string, error) {
		return login + "@" + account, nil
	}).To("tagged", streams.String, streams.String)
	apps, _ := runInstances(t, 2, top, streams.Brokers(b.Addr), streams.ApplicationID("tagger"),
		streams.CommitInterval(200*time.Millisecond))
	// Both members own logins partitions, all three assigned: the new
	// balancer is cooperative, so "Stable with two members" is also seen
	// between its two rounds.
	waitAssigned(t, b.Addr, "tagger", "logins", 2, 3)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	groups, err := kadm.NewClient(cl).DescribeGroups(ctx, "tagger")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range groups["tagger"].Members {
		a, ok := m.Assigned.AsConsumer()
		if !ok {
			t.Fatalf("member %s has no consumer assignment", m.MemberID)
		}
		owned := map[string][]int32{}
		for _, at := range a.Topics {
			owned[at.Topic] = append(owned[at.Topic], at.Partitions...)
		}
		sort.Slice(owned["accounts"], func(i, j int) bool { return owned["accounts"][i] < owned["accounts"][j] })
		sort.Slice(owned["logins"], func(i, j int) bool { return owned["logins"][i] < owned["logins"][j] })
		if len(owned["logins"]) == 0 || fmt.Sprint(owned["accounts"]) != fmt.Sprint(owned["logins"]) {
			t.Fatalf("member %s owns accounts %v and logins %v, want the same partitions of each", m.MemberID, owned["accounts"], owned["logins"])
		}
	}

	if err := produceEach(b.Addr, 0, 64, func(i int) *kgo.Record {
		return &kgo.Record{Topic: "accounts", Key: fmt.Appendf(nil, "a%d", i), Value: fmt.Appendf(nil, "acct%d", i)}
	}); err != nil {
		t.Fatal(err)
	}
	newCommittedReader(t, b.Addr, "tagger-accounts-changelog").until(t, 64, 30*time.Second)
	const n = 2000
	if err := produceEach(b.Addr, 0, n, func(i int) *kgo.Record {
		return &kgo.Record{Topic: "logins", Key: fmt.Appendf(nil, "a%d", i%64), Value: fmt.Appendf(nil, "l%d", i)}
	}); err != nil {
		t.Fatal(err)
	}
	for _, r := range newCommittedReader(t, b.Addr, "tagged").until(t, n, 30*time.Second) {
		if want := fmt.Sprintf("@acct%s", strings.TrimPrefix(string(r.Key), "a")); !strings.HasSuffix(string(r.Value), want) {
			t.Fatalf("%s: %s, want suffix %s", r.Key, r.Value, want)
		}
	}
	checkAllProcessed(t, apps)
}
