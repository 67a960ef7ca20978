package broker

// Lag monitor tests against real partition logs, with the group coordinator
// replaced by fakeGroups (a hand-fed snapshot) and the clock by a variable:
// lag in records and seconds, the /v1/groups API and its statuses, and the
// Prometheus series. lag_groups_test.go drives the same paths with real
// consumer groups.

import (
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/broker/groups"
	"github.com/strata-streaming/strata/broker/lag"
)

// fakeGroups stands in for the coordinator: groups with committed offsets.
type fakeGroups struct {
	mu     sync.Mutex
	groups map[string]*groupSnapshot
}

func (f *fakeGroups) snapshots() []groupSnapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []groupSnapshot
	for _, g := range f.groups {
		c := *g
		c.Offsets = append([]committedOffset(nil), g.Offsets...)
		out = append(out, c)
	}
	return out
}

// commit sets group's committed offset on topic/partition at time at.
func (f *fakeGroups) commit(group, topic string, partition int32, offset int64, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.groups == nil {
		f.groups = map[string]*groupSnapshot{}
	}
	g := f.groups[group]
	if g == nil {
		g = &groupSnapshot{Group: group, State: "Empty", ProtocolType: "consumer"}
		f.groups[group] = g
	}
	o := committedOffset{Topic: topic, Partition: partition, Offset: offset, LeaderEpoch: -1, CommitTimestamp: at}
	for i := range g.Offsets {
		if g.Offsets[i].Topic == topic && g.Offsets[i].Partition == partition {
			g.Offsets[i] = o
			return
		}
	}
	g.Offsets = append(g.Offsets, o)
}

func (f *fakeGroups) remove(group string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.groups, group)
}

// testClock is a settable clock for the monitor.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// lagFixture is a broker with a topic, a fake coordinator and a monitor on
// an httptest server.
type lagFixture struct {
	t       *testing.T
	tb      *testBroker
	groups  *fakeGroups
	clock   *testClock
	monitor *lagMonitor
	http    *httptest.Server
	reg     *prometheus.Registry
}

func newLagFixture(t *testing.T, cfg lag.Config) *lagFixture {
	tb := startTestBroker(t)
	f := &lagFixture{t: t, tb: tb, groups: &fakeGroups{}, clock: &testClock{now: time.Now()}}
	f.monitor = newLagMonitor(tb.srv.topics, slog.New(slog.DiscardHandler), f.groups.snapshots, cfg)
	f.monitor.now = f.clock.Now
	mux := http.NewServeMux()
	f.monitor.mountLagRoutes(mux)
	f.http = httptest.NewServer(mux)
	t.Cleanup(f.http.Close)
	f.reg = prometheus.NewRegistry()
	f.reg.MustRegister(newLagCollector(f.monitor))
	return f
}

// produce appends records to topic/partition with the given timestamps,
// in one batch, and returns the first offset.
func (f *lagFixture) produce(topic string, partition int32, timestamps ...time.Time) int64 {
	f.t.Helper()
	cl := f.tb.client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.SnappyCompression()))
	records := make([]*kgo.Record, len(timestamps))
	for i, ts := range timestamps {
		records[i] = &kgo.Record{Topic: topic, Partition: partition, Value: []byte("v"), Timestamp: ts}
	}
	res := cl.ProduceSync(testContext(f.t), records...)
	if err := res.FirstErr(); err != nil {
		f.t.Fatalf("produce: %v", err)
	}
	return res[0].Record.Offset
}

func (f *lagFixture) createTopic(name string, partitions int32) {
	f.t.Helper()
	resp, err := kadm.NewClient(f.tb.client()).CreateTopic(testContext(f.t), partitions, 1, nil, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		f.t.Fatalf("create topic %s: %v", name, err)
	}
}

// get fetches path from the lag API and decodes the JSON into v.
func (f *lagFixture) get(path string, v any) int {
	f.t.Helper()
	return httpJSON(f.t, http.MethodGet, f.http.URL+path, v)
}

func httpJSON(t testing.TB, method, url string, v any) int {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: content type %q, body %s", method, url, ct, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("%s %s: %v in %s", method, url, err, body)
	}
	return resp.StatusCode
}

// groupLagResponse mirrors GET /v1/groups/{group}/lag as a client reads it.
type groupLagResponse struct {
	Group    string `json:"group"`
	State    string `json:"state"`
	Status   string `json:"status"`
	Severity string `json:"severity"`
	TotalLag int64  `json:"total_lag"`
	Window   struct {
		Commits int `json:"commits"`
	} `json:"window"`
	Partitions []struct {
		Topic           string   `json:"topic"`
		Partition       int32    `json:"partition"`
		CommittedOffset int64    `json:"committed_offset"`
		LogEndOffset    *int64   `json:"log_end_offset"`
		LagRecords      *int64   `json:"lag_records"`
		LagSeconds      *float64 `json:"lag_seconds"`
		Status          string   `json:"status"`
		Complete        float64  `json:"complete"`
		Window          []struct {
			Offset int64     `json:"offset"`
			Lag    int64     `json:"lag"`
			Time   time.Time `json:"time"`
		} `json:"window"`
	} `json:"partitions"`
}

type groupListResponse struct {
	Error  string `json:"error"`
	Groups []struct {
		Group      string `json:"group"`
		State      string `json:"state"`
		Partitions int    `json:"partitions"`
		Status     string `json:"status"`
		Severity   string `json:"severity"`
		TotalLag   int64  `json:"total_lag"`
	} `json:"groups"`
}

// gauge returns the value of a gathered series, and whether it exists.
func gauge(t testing.TB, reg *prometheus.Registry, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range families {
		if fam.GetName() != name {
			continue
		}
	metrics:
		for _, m := range fam.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue metrics
				}
			}
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

func TestLagRecordsAndSecondsFromTheLog(t *testing.T) {
	f := newLagFixture(t, lag.Config{})
	f.createTopic("events", 2)
	base := f.clock.Now().Add(-time.Hour).Truncate(time.Millisecond)
	stamps := make([]time.Time, 10)
	for i := range stamps {
		stamps[i] = base.Add(time.Duration(i) * time.Minute)
	}
	f.produce("events", 0, stamps...)
	f.groups.commit("billing", "events", 0, 4, f.clock.Now()) // mid-batch: record 4 is 54 minutes old
	f.groups.commit("billing", "events", 1, 0, f.clock.Now()) // empty partition
	f.groups.commit("done", "events", 0, 10, f.clock.Now())   // caught up

	labels := func(group string, partition string) map[string]string {
		return map[string]string{"group": group, "topic": "events", "partition": partition}
	}
	wantSeconds := f.clock.Now().Sub(stamps[4]).Seconds()
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"strata_group_committed_offset", labels("billing", "0"), 4},
		{"strata_group_lag_records", labels("billing", "0"), 6},
		{"strata_group_lag_seconds", labels("billing", "0"), wantSeconds},
		{"strata_group_committed_offset", labels("billing", "1"), 0},
		{"strata_group_lag_records", labels("billing", "1"), 0},
		{"strata_group_lag_seconds", labels("billing", "1"), 0},
		{"strata_group_lag_records", labels("done", "0"), 0},
		{"strata_group_lag_seconds", labels("done", "0"), 0},
		{"strata_group_status", map[string]string{"group": "billing"}, 0},
	} {
		got, ok := gauge(t, f.reg, c.name, c.labels)
		if !ok || math.Abs(got-c.want) > 0.001 {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}

	// A later scrape is served from the cache: the answer moves only with
	// the clock.
	f.clock.advance(10 * time.Second)
	if got, _ := gauge(t, f.reg, "strata_group_lag_seconds", labels("billing", "0")); math.Abs(got-(wantSeconds+10)) > 0.001 {
		t.Errorf("lag seconds 10 s later = %v, want %v", got, wantSeconds+10)
	}
	f.monitor.mu.Lock()
	cached := len(f.monitor.mu.recordTime)
	f.monitor.mu.Unlock()
	if cached != 1 {
		t.Errorf("record time cache holds %d entries, want 1", cached)
	}

	// Below the log start the next record is the first one left.
	if _, err := kadm.NewClient(f.tb.client()).DeleteRecords(testContext(t), kadm.Offsets{"events": {0: {Topic: "events", Partition: 0, At: 7}}}); err != nil {
		t.Fatal(err)
	}
	f.groups.commit("billing", "events", 0, 2, f.clock.Now())
	wantSeconds = f.clock.Now().Sub(stamps[7]).Seconds()
	if got, _ := gauge(t, f.reg, "strata_group_lag_seconds", labels("billing", "0")); math.Abs(got-wantSeconds) > 0.001 {
		t.Errorf("lag seconds below the log start = %v, want %v", got, wantSeconds)
	}
	if got, _ := gauge(t, f.reg, "strata_group_lag_records", labels("billing", "0")); got != 8 {
		t.Errorf("lag records below the log start = %v, want 8 (high watermark - committed)", got)
	}

	// A group on a deleted topic keeps its committed offset but has no lag.
	f.groups.commit("billing", "gone", 0, 5, f.clock.Now())
	if _, ok := gauge(t, f.reg, "strata_group_committed_offset", map[string]string{"group": "billing", "topic": "gone", "partition": "0"}); !ok {
		t.Error("committed offset of a missing topic not reported")
	}
	if _, ok := gauge(t, f.reg, "strata_group_lag_records", map[string]string{"group": "billing", "topic": "gone", "partition": "0"}); ok {
		t.Error("lag reported for a missing topic")
	}
}

func TestLagAPI(t *testing.T) {
	f := newLagFixture(t, lag.Config{Window: 5, MinDistance: -1})
	f.createTopic("jobs", 1)
	now := f.clock.Now()
	f.produce("jobs", 0, now, now, now, now, now, now, now, now, now, now) // log end 10
	f.groups.commit("workers", "jobs", 0, 2, f.clock.advance(time.Second))

	var list groupListResponse
	if code := f.get("/v1/groups", &list); code != http.StatusOK || len(list.Groups) != 1 {
		t.Fatalf("GET /v1/groups = %d %+v", code, list)
	}
	if g := list.Groups[0]; g.Group != "workers" || g.State != "Empty" || g.Partitions != 1 || g.Status != "OK" || g.Severity != "OK" || g.TotalLag != 8 {
		t.Errorf("group summary = %+v", g)
	}

	var one groupLagResponse
	if code := f.get("/v1/groups/workers/lag", &one); code != http.StatusOK {
		t.Fatalf("GET lag = %d", code)
	}
	if one.Group != "workers" || one.Window.Commits != 5 || len(one.Partitions) != 1 || one.TotalLag != 8 {
		t.Fatalf("lag = %+v", one)
	}
	p := one.Partitions[0]
	if p.LogEndOffset == nil || p.LagRecords == nil || p.LagSeconds == nil {
		t.Fatalf("null lag: %+v", p)
	}
	if p.Topic != "jobs" || p.Partition != 0 || p.CommittedOffset != 2 || *p.LogEndOffset != 10 || *p.LagRecords != 8 ||
		*p.LagSeconds < 0.9 || p.Status != "OK" || len(p.Window) != 1 || p.Window[0].Lag != 8 || p.Complete != 0.2 {
		t.Errorf("partition = %+v", p)
	}

	// The consumer keeps committing offset 2 while there is lag: STALL.
	for range 2 {
		f.groups.commit("workers", "jobs", 0, 2, f.clock.advance(5*time.Second))
		f.get("/v1/groups/workers/lag", &one)
	}
	if one.Status != "STALL" || one.Severity != "ERR" || one.Partitions[0].Status != "STALL" || len(one.Partitions[0].Window) != 3 {
		t.Errorf("after three commits of offset 2: %s/%s, window %+v", one.Status, one.Severity, one.Partitions[0].Window)
	}

	// It moves on but the producer is faster: WARN (the window keeps 5).
	for i := range 5 {
		f.produce("jobs", 0, now, now, now)
		f.groups.commit("workers", "jobs", 0, int64(3+i), f.clock.advance(5*time.Second))
		f.get("/v1/groups/workers/lag", &one)
	}
	if one.Status != "WARN" || one.Severity != "WARN" || len(one.Partitions[0].Window) != 5 || one.Partitions[0].Window[0].Offset != 3 {
		t.Errorf("falling behind: %s, window %+v", one.Status, one.Partitions[0].Window)
	}

	// Someone rewinds it: REWIND.
	f.groups.commit("workers", "jobs", 0, 0, f.clock.advance(5*time.Second))
	f.get("/v1/groups/workers/lag", &one)
	if one.Status != "REWIND" {
		t.Errorf("after a rewind: %s", one.Status)
	}

	// It stops committing for longer than the window spans: STOP.
	f.clock.advance(10 * time.Minute)
	f.get("/v1/groups/workers/lag", &one)
	if one.Status != "STOP" {
		t.Errorf("ten minutes without a commit: %s", one.Status)
	}

	// It catches up: OK however long ago it committed.
	f.groups.commit("workers", "jobs", 0, 25, f.clock.advance(time.Second))
	f.clock.advance(time.Hour)
	f.get("/v1/groups/workers/lag", &one)
	if one.Status != "OK" || one.TotalLag != 0 || one.Partitions[0].LagSeconds == nil || *one.Partitions[0].LagSeconds != 0 {
		t.Errorf("caught up: %+v", one)
	}

	// Errors are JSON too.
	var e struct {
		Error string `json:"error"`
	}
	if code := f.get("/v1/groups/nobody/lag", &e); code != http.StatusNotFound || e.Error != `group "nobody" not found` {
		t.Errorf("unknown group: %d %q", code, e.Error)
	}
	if code := httpJSON(t, http.MethodPost, f.http.URL+"/v1/groups", &e); code != http.StatusMethodNotAllowed || !strings.Contains(e.Error, "POST") {
		t.Errorf("POST: %d %q", code, e.Error)
	}
	if code := f.get("/v1/nothing", &e); code != http.StatusNotFound {
		t.Errorf("unknown path: %d %q", code, e.Error)
	}

	// A deleted group disappears, and the evaluator forgets it.
	f.groups.remove("workers")
	if code := f.get("/v1/groups/workers/lag", &e); code != http.StatusNotFound {
		t.Errorf("deleted group: %d", code)
	}
	if got := f.monitor.eval.Groups(); len(got) != 0 {
		t.Errorf("evaluator still knows %v", got)
	}
	f.get("/v1/groups", &list)
	if len(list.Groups) != 0 {
		t.Errorf("groups after delete: %+v", list.Groups)
	}
}

func TestLagSamplerSeesEachCommitOnce(t *testing.T) {
	f := newLagFixture(t, lag.Config{MinDistance: -1})
	f.createTopic("t", 1)
	at := f.clock.Now()
	f.groups.commit("g", "t", 0, 0, at)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		f.monitor.run(done, time.Millisecond)
	}()
	waitFor(t, 5*time.Second, "the sampler's first commit", func() bool { return len(f.monitor.eval.Groups()) == 1 })
	time.Sleep(20 * time.Millisecond) // many samples of the same commit
	f.groups.commit("g", "t", 0, 0, at.Add(time.Second))
	waitFor(t, 5*time.Second, "the second commit", func() bool {
		gs, _ := f.monitor.eval.Evaluate("g", f.clock.Now(), nil)
		return len(gs.Partitions) == 1 && len(gs.Partitions[0].Window) == 2
	})
	time.Sleep(20 * time.Millisecond)
	close(done)
	<-finished
	gs, _ := f.monitor.eval.Evaluate("g", f.clock.Now(), nil)
	if n := len(gs.Partitions[0].Window); n != 2 {
		t.Errorf("window holds %d commits, want 2", n)
	}
}

func TestCommitHookAndSamplerCountACommitOnce(t *testing.T) {
	f := newLagFixture(t, lag.Config{MinDistance: -1})
	f.createTopic("t", 1)
	f.produce("t", 0, f.clock.Now(), f.clock.Now())
	at := f.clock.Now().Truncate(time.Millisecond)
	hook := func(offset int64, at time.Time) {
		f.monitor.observeCommits("g", []groups.CommitOffset{{
			TopicPartition:    groups.TopicPartition{Topic: "t", Partition: 0},
			OffsetAndMetadata: groups.OffsetAndMetadata{Offset: offset, LeaderEpoch: -1, CommitTimestamp: at.UnixMilli(), ExpireTimestamp: -1},
		}})
		f.groups.commit("g", "t", 0, offset, at) // what the coordinator's snapshot then shows
	}
	hook(1, at)
	hook(1, at.Add(time.Second))
	f.monitor.sample()
	f.monitor.sample()
	gs, ok := f.monitor.eval.Evaluate("g", f.clock.Now(), nil)
	if !ok || len(gs.Partitions) != 1 || len(gs.Partitions[0].Window) != 2 {
		t.Fatalf("evaluation = %+v", gs)
	}
	if w := gs.Partitions[0].Window; w[0].LogEndOffset != 2 || w[0].Lag() != 1 || !w[1].Time.Equal(at.Add(time.Second)) {
		t.Errorf("window = %+v", w)
	}

	// A commit the hook reports after the sampler took its snapshot (here:
	// never in the snapshot) survives that sample, not the next.
	f.monitor.mu.Lock()
	before := f.monitor.mu.hookCalls
	f.monitor.mu.Unlock()
	f.monitor.snapshots = func() []groupSnapshot {
		snaps := f.groups.snapshots()
		if f.monitor.mu.TryLock() { // the hook runs while the snapshot is taken
			f.monitor.mu.Unlock()
			f.monitor.observeCommits("fresh", []groups.CommitOffset{{
				TopicPartition:    groups.TopicPartition{Topic: "t"},
				OffsetAndMetadata: groups.OffsetAndMetadata{CommitTimestamp: at.UnixMilli()},
			}})
		}
		return snaps
	}
	f.monitor.sample()
	if _, ok := f.monitor.eval.Evaluate("fresh", f.clock.Now(), nil); !ok {
		t.Error("a commit newer than the snapshot was forgotten")
	}
	f.monitor.snapshots = f.groups.snapshots
	f.monitor.sample()
	if _, ok := f.monitor.eval.Evaluate("fresh", f.clock.Now(), nil); ok {
		t.Error("a group the coordinator does not have is still evaluated")
	}
	if f.monitor.mu.hookCalls != before+1 {
		t.Errorf("hook calls %d, want %d", f.monitor.mu.hookCalls, before+1)
	}

	var none *lagMonitor
	none.observeCommits("g", nil) // no admin listener: no monitor, no panic
}
