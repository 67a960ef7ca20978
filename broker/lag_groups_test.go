package broker

// Consumer lag end to end on a real broker: a franz-go group consumer
// commits, and the admin listener's /v1/groups API and /metrics report the
// group, its lag in records and seconds, and its status.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/internal/tlsconf"
)

// scrapeLag returns the strata_group_* samples of /metrics by series text,
// e.g. `strata_group_lag_records{group="g",partition="0",topic="t"}`.
func scrapeLag(t *testing.T, tb *testBroker) map[string]float64 {
	t.Helper()
	return scrapeSeries(t, tb, "strata_group_")
}

// scrapeSeries returns the samples of /metrics whose names start with
// prefix, by series text.
func scrapeSeries(t *testing.T, tb *testBroker, prefix string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + tb.srv.HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad sample %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

func TestLagOfARealConsumerGroup(t *testing.T) {
	tb := startTestBroker(t, func(c *Config) { c.GroupInitialRebalanceDelayMs = 0 })
	ctx := testContext(t)
	adm := kadm.NewClient(tb.client())
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	producer := tb.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var records []*kgo.Record
	for p := range int32(2) {
		for i := range 10 {
			records = append(records, &kgo.Record{Topic: "orders", Partition: p, Value: []byte("o"), Timestamp: base.Add(time.Duration(i) * time.Minute)})
		}
	}
	if err := producer.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	consumer, err := kgo.NewClient(kgo.SeedBrokers(tb.addr()), kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	for seen := 0; seen < 20; {
		fetches := consumer.PollFetches(ctx)
		if err := fetches.Err(); err != nil {
			t.Fatalf("poll: %v", err)
		}
		seen += fetches.NumRecords()
	}
	commit := func(p0, p1 int64) {
		t.Helper()
		err := commitSync(ctx, consumer, map[string]map[int32]kgo.EpochOffset{
			"orders": {0: {Epoch: -1, Offset: p0}, 1: {Epoch: -1, Offset: p1}},
		})
		if err != nil {
			t.Fatalf("commit: %v", err)
		}
	}
	commit(4, 10)

	var list groupListResponse
	if code := httpJSON(t, http.MethodGet, "http://"+tb.srv.HTTPAddr()+"/v1/groups", &list); code != http.StatusOK {
		t.Fatalf("GET /v1/groups: %d", code)
	}
	if len(list.Groups) != 1 || list.Groups[0].Group != "billing" || list.Groups[0].State != "Stable" ||
		list.Groups[0].Status != "OK" || list.Groups[0].TotalLag != 6 || list.Groups[0].Partitions != 2 {
		t.Errorf("groups = %+v", list.Groups)
	}

	var one groupLagResponse
	url := "http://" + tb.srv.HTTPAddr() + "/v1/groups/billing/lag"
	if code := httpJSON(t, http.MethodGet, url, &one); code != http.StatusOK || len(one.Partitions) != 2 {
		t.Fatalf("GET lag: %d %+v", code, one)
	}
	p0, p1 := one.Partitions[0], one.Partitions[1]
	age := time.Since(base.Add(4 * time.Minute)).Seconds()
	if p0.LogEndOffset == nil || p0.LagRecords == nil || p0.LagSeconds == nil || p1.LagRecords == nil || p1.LagSeconds == nil {
		t.Fatalf("null lag: %+v %+v", p0, p1)
	}
	if p0.Partition != 0 || p0.CommittedOffset != 4 || *p0.LogEndOffset != 10 || *p0.LagRecords != 6 ||
		math.Abs(*p0.LagSeconds-age) > 5 || p0.Status != "OK" || len(p0.Window) != 1 {
		t.Errorf("partition 0 = %+v (want lag seconds near %v)", p0, age)
	}
	if p1.CommittedOffset != 10 || *p1.LagRecords != 0 || *p1.LagSeconds != 0 {
		t.Errorf("partition 1 = %+v", p1)
	}

	series := scrapeLag(t, tb)
	for name, want := range map[string]float64{
		`strata_group_committed_offset{group="billing",partition="0",topic="orders"}`: 4,
		`strata_group_lag_records{group="billing",partition="0",topic="orders"}`:      6,
		`strata_group_lag_records{group="billing",partition="1",topic="orders"}`:      0,
		`strata_group_lag_seconds{group="billing",partition="1",topic="orders"}`:      0,
		`strata_group_status{group="billing"}`:                                        0,
	} {
		if got, ok := series[name]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	if got := series[`strata_group_lag_seconds{group="billing",partition="0",topic="orders"}`]; math.Abs(got-age) > 5 {
		t.Errorf("lag seconds of partition 0 = %v, want about %v", got, age)
	}

	// The group keeps committing offset 4 while records wait: STALL. The
	// coordinator reports each commit as it happens.
	for range 2 {
		time.Sleep(1100 * time.Millisecond) // beyond the default min distance
		commit(4, 10)
	}
	httpJSON(t, http.MethodGet, url, &one)
	if one.Status != "STALL" || one.Severity != "ERR" || len(one.Partitions[0].Window) != 3 {
		t.Errorf("after three commits of the same offset: %s/%s %+v", one.Status, one.Severity, one.Partitions[0])
	}

	// Gone with the group.
	consumer.Close()
	if _, err := adm.DeleteGroup(ctx, "billing"); err != nil {
		t.Fatalf("delete group: %v", err)
	}
	var e struct {
		Error string `json:"error"`
	}
	if code := httpJSON(t, http.MethodGet, url, &e); code != http.StatusNotFound || e.Error != `group "billing" not found` {
		t.Errorf("lag of a deleted group: %d %q", code, e.Error)
	}
	if series := scrapeLag(t, tb); len(series) != 0 {
		t.Errorf("series left after the group was deleted: %v", series)
	}
}

// commitSync commits offsets as the group member and returns the request's
// error or the first partition's.
func commitSync(ctx context.Context, cl *kgo.Client, offsets map[string]map[int32]kgo.EpochOffset) error {
	var result error
	cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			result = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if e := kerr.ErrorForCode(p.ErrorCode); e != nil && result == nil {
					result = e
				}
			}
		}
	})
	return result
}

// Every node of a three-node cluster answers the lag API for every group,
// not only the group's coordinator: the same committed offsets, log end
// offsets and lag, the whole cluster's group list, and 404 for a group
// nobody has.
func TestLagAnsweredByEveryNode(t *testing.T) {
	c := startTestCluster(t, 3, func(cfg *Config) {
		cfg.HTTPListen = "127.0.0.1:0"
		cfg.GroupInitialRebalanceDelayMs = 0
	})
	checkLagOnEveryNode(t, c, seedBillingGroup(t, c), nil)
}

// seedBillingGroup writes 10 records to each of the two partitions of
// orders (three replicas) and commits offsets 4 and 10 for group billing
// with a client of opts; it returns the group's coordinator.
func seedBillingGroup(t *testing.T, c *testCluster, opts ...kgo.Opt) int32 {
	t.Helper()
	ctx := testContext(t)
	adm := kadm.NewClient(c.client(opts...))
	if resp, err := adm.CreateTopic(ctx, 2, 3, nil, "orders"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	producer := c.client(append([]kgo.Opt{kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks())}, opts...)...)
	var records []*kgo.Record
	for p := range int32(2) {
		for range 10 {
			records = append(records, &kgo.Record{Topic: "orders", Partition: p, Value: []byte("o")})
		}
	}
	if err := producer.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 4, LeaderEpoch: -1})
	offsets.Add(kadm.Offset{Topic: "orders", Partition: 1, At: 10, LeaderEpoch: -1})
	if resp, err := adm.CommitOffsets(ctx, "billing", offsets); err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}
	coordinators := adm.FindGroupCoordinators(ctx, "billing")
	if coordinators["billing"].Err != nil {
		t.Fatalf("find coordinator: %v", coordinators["billing"].Err)
	}
	return coordinators["billing"].NodeID
}

// checkLagOnEveryNode asks every node of c for the lag of group billing
// (orders/0 committed at 4 of 10, orders/1 at 10 of 10), the group list
// and an unknown group; auth, if not nil, authenticates the requests.
func checkLagOnEveryNode(t *testing.T, c *testCluster, coordinator int32, auth func(*http.Request)) {
	t.Helper()
	get := func(url string, v any) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if auth != nil {
			auth(req)
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
			t.Errorf("GET %s: content type %q, body %s", url, ct, body)
		}
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: %v in %s", url, err, body)
		}
		return resp.StatusCode
	}
	type lagAnswer struct {
		Group       string `json:"group"`
		Coordinator *int32 `json:"coordinator"`
		TotalLag    int64  `json:"total_lag"`
		Partitions  []struct {
			Topic           string `json:"topic"`
			Partition       int32  `json:"partition"`
			CommittedOffset int64  `json:"committed_offset"`
			LogEndOffset    *int64 `json:"log_end_offset"`
			LagRecords      *int64 `json:"lag_records"`
		} `json:"partitions"`
	}
	want := "orders/0 committed 4 end 10 lag 6; orders/1 committed 10 end 10 lag 0; total 6"
	describe := func(a lagAnswer) string {
		var parts []string
		for _, p := range a.Partitions {
			if p.LogEndOffset == nil || p.LagRecords == nil {
				parts = append(parts, fmt.Sprintf("%s/%d committed %d end null", p.Topic, p.Partition, p.CommittedOffset))
				continue
			}
			parts = append(parts, fmt.Sprintf("%s/%d committed %d end %d lag %d", p.Topic, p.Partition, p.CommittedOffset, *p.LogEndOffset, *p.LagRecords))
		}
		return strings.Join(parts, "; ") + fmt.Sprintf("; total %d", a.TotalLag)
	}
	for _, nb := range c.nodes {
		base := "http://" + nb.srv.HTTPAddr()
		var got lagAnswer
		var code int
		// A follower's high watermark may trail the leader's a moment.
		waitUntil(t, 10*time.Second, fmt.Sprintf("node %d's lag of billing", nb.cfg.NodeID), func() bool {
			got = lagAnswer{}
			code = get(base+"/v1/groups/billing/lag", &got)
			return code == http.StatusOK && describe(got) == want
		})
		switch {
		case nb.cfg.NodeID == coordinator && got.Coordinator != nil:
			t.Errorf("node %d (the coordinator) names coordinator %d", nb.cfg.NodeID, *got.Coordinator)
		case nb.cfg.NodeID != coordinator && (got.Coordinator == nil || *got.Coordinator != coordinator):
			t.Errorf("node %d: coordinator %v, want %d", nb.cfg.NodeID, got.Coordinator, coordinator)
		}

		var list groupListResponse
		if code := get(base+"/v1/groups", &list); code != http.StatusOK {
			t.Fatalf("node %d: GET /v1/groups: %d %+v", nb.cfg.NodeID, code, list)
		}
		if len(list.Groups) != 1 || list.Groups[0].Group != "billing" || list.Groups[0].TotalLag != 6 || list.Groups[0].Partitions != 2 {
			t.Errorf("node %d: groups = %+v", nb.cfg.NodeID, list.Groups)
		}

		var e struct {
			Error string `json:"error"`
		}
		if code := get(base+"/v1/groups/nobody/lag", &e); code != http.StatusNotFound || e.Error != `group "nobody" not found` {
			t.Errorf("node %d: unknown group: %d %q", nb.cfg.NodeID, code, e.Error)
		}
	}
}

// TestLagAnsweredByEveryNodeOverMutualTLS: the same with an mTLS-only
// listener, an authorizer and basic authentication on the admin listener:
// a node asks the coordinator with its own certificate (User:broker, the
// super user); the HTTP caller still needs its credentials on every node.
func TestLagAnsweredByEveryNodeOverMutualTLS(t *testing.T) {
	f := newTLSFixture(t)
	adminCert := f.ca.Issue("admin")
	users := filepath.Join(t.TempDir(), "http-users")
	if err := os.WriteFile(users, []byte("ops=ops-pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startTestCluster(t, 3, func(cfg *Config) {
		cfg.HTTPListen = "127.0.0.1:0"
		mustSet(t, cfg,
			"listeners", "INTERNAL://"+cfg.Listen,
			"listener.security.protocol.map", "INTERNAL:SSL",
			"inter.broker.listener.name", "INTERNAL",
			"ssl.keystore.location", f.server.Keystore,
			"ssl.truststore.location", f.ca.File,
			"ssl.client.auth", "required",
			"ssl.principal.mapping.rules", "RULE:^CN=([^,]*),.*$/$1/,DEFAULT",
			"authorizer.class.name", "strata",
			"super.users", "User:broker;User:admin;User:ops",
			"admin.http.auth.basic.users.file", users,
		)
	})
	src, err := tlsconf.New(map[string]string{tlsconf.TruststoreLocation: f.ca.File, tlsconf.KeystoreLocation: adminCert.Keystore})
	if err != nil {
		t.Fatal(err)
	}
	coordinator := seedBillingGroup(t, c, kgo.DialTLSConfig(src.ClientConfig()))
	for _, nb := range c.nodes {
		resp, err := http.Get("http://" + nb.srv.HTTPAddr() + "/v1/groups/billing/lag")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("node %d without credentials: %d", nb.cfg.NodeID, resp.StatusCode)
		}
	}
	checkLagOnEveryNode(t, c, coordinator, func(r *http.Request) { r.SetBasicAuth("ops", "ops-pw") })
}
