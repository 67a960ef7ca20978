package streams_test

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/streams"
)

// queryAnswer is one interactive query's status, instance and JSON body.
type queryAnswer struct {
	status   int
	instance string
	body     map[string]any
}

func queryGet(t *testing.T, method, addr, path string, header ...string) queryAnswer {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := queryAnswer{status: resp.StatusCode, instance: resp.Header.Get("Strata-Query-Instance")}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: content type %q, want JSON", method, path, ct)
	}
	if err := json.NewDecoder(resp.Body).Decode(&a.body); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return a
}

// waitAssigned waits until group is stable with members members and, when
// topic is not "", each is assigned some of the partitions of topic and
// all of them together: "Stable" alone is also seen between the rounds of
// a cooperative rebalance, before revoked partitions are reassigned.
func waitAssigned(t *testing.T, addr, group, topic string, members, partitions int) {
	t.Helper()
	describeUntil(t, addr, group, fmt.Sprintf("%d members sharing %d partitions of %q", members, partitions, topic), func(g kadm.DescribedGroup) bool {
		assigned, each := 0, true
		for _, m := range g.Members {
			c, ok := m.Assigned.AsConsumer()
			n := 0
			for _, tp := range c.Topics {
				if ok && tp.Topic == topic {
					n += len(tp.Partitions)
				}
			}
			assigned += n
			each = each && (n > 0 || topic == "")
		}
		return len(g.Members) == members && each && assigned == partitions
	})
}

// TestInteractiveQueriesAnswerLikeTheOutputTopic: two instances share a
// counted topic of four partitions; every key's count, asked of either
// instance, equals the key's last value on the output topic (an instance
// without the key forwards to its owner), as do the windows of a windowed
// count and a range query; bad requests get 400/404/405 JSON.
func TestInteractiveQueriesAnswerLikeTheOutputTopic(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "clicks", 4)
	var apps []*streams.App
	var stops []func()
	for _, id := range []string{"a", "b"} {
		top := streams.NewTopology()
		clicks := streams.From(top, streams.String, streams.String, []string{"clicks"})
		byUser := clicks.GroupByKey(streams.String, streams.String)
		byUser.Count(streams.Named("clicks-per-user")).ToStream().To("click-counts", streams.String, streams.Int64)
		streams.WindowedBy(byUser, streams.TumblingWindows(time.Second)).Count(streams.Named("clicks-per-second"), streams.Retention(time.Hour)).
			ToStream().To("window-counts", streams.WindowedSerde(streams.String), streams.Int64)
		app, err := streams.NewApp(top, streams.Brokers(b.Addr), streams.ApplicationID("iq"), streams.InstanceID(id),
			streams.StateDir(t.TempDir()), streams.CommitInterval(50*time.Millisecond), streams.QueryListen("127.0.0.1:0"),
			streams.ClientOpts(kgo.SessionTimeout(3*time.Second), kgo.HeartbeatInterval(300*time.Millisecond)))
		if err != nil {
			t.Fatal(err)
		}
		stops = append(stops, runApp(t, app))
		apps = append(apps, app)
	}
	start := time.Now()
	waitAssigned(t, b.Addr, "iq", "clicks", 2, 4)
	t.Logf("group stable after %v", time.Since(start))
	addrs := []string{apps[0].QueryAddr(), apps[1].QueryAddr()}
	if addrs[0] == "" || addrs[1] == "" || addrs[0] == addrs[1] {
		t.Fatalf("query addresses %q", addrs)
	}

	const n, users = 2000, 20
	base := time.UnixMilli(1_700_000_000_000)
	if err := produceEach(b.Addr, 0, n, func(i int) *kgo.Record {
		return &kgo.Record{Topic: "clicks", Key: fmt.Appendf(nil, "user%d", i%users), Value: []byte("click"),
			Timestamp: base.Add(time.Duration(i) * 10 * time.Millisecond)}
	}); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	readAllRecords(t, b.Addr, "click-counts", n, func(r *kgo.Record) { counts[string(r.Key)] = int64(binary.BigEndian.Uint64(r.Value)) })
	windows := map[string]map[int64]int64{} // user → window start → count
	wk := streams.WindowedSerde(streams.String)
	readAllRecords(t, b.Addr, "window-counts", n, func(r *kgo.Record) {
		w, err := wk.Decode(r.Key)
		if err != nil {
			t.Fatal(err)
		}
		if windows[w.Key] == nil {
			windows[w.Key] = map[int64]int64{}
		}
		windows[w.Key][w.Start.UnixMilli()] = int64(binary.BigEndian.Uint64(r.Value))
	})
	if len(counts) != users || counts["user7"] != n/users || len(windows["user7"]) != 20 || windows["user7"][base.UnixMilli()] != 5 {
		t.Fatalf("output: %d users, user7 counted %d in %d windows (%v); want %d users, %d clicks each, 20 windows of 5",
			len(counts), counts["user7"], len(windows["user7"]), windows["user7"], users, n/users)
	}

	// Only committed state is visible: wait until it has caught up with
	// the output, then every key must answer the same via both instances.
	t.Logf("output complete %v after the start", time.Since(start))
	served := map[string]bool{}
	owner := map[string]string{}
	deadline := time.Now().Add(30 * time.Second)
	for user, want := range counts {
		for _, addr := range addrs {
			for {
				a := queryGet(t, http.MethodGet, addr, "/v1/jobs/iq/stores/clicks-per-user/keys/"+user)
				if a.status == http.StatusOK && a.body["value"] == float64(want) && a.body["key"] == user {
					served[a.instance] = true
					owner[user] = a.instance
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s via %s: %d %v, want value %d", user, addr, a.status, a.body, want)
				}
				time.Sleep(20 * time.Millisecond) // the next commit
			}
		}
	}
	if !served[addrs[0]] || !served[addrs[1]] {
		t.Errorf("answers read by %v, want both instances (each owns partitions)", served)
	}
	t.Logf("every key answered %v after the start", time.Since(start))
	// A forwarded request is answered locally or not at all (no loops).
	other := map[string]string{addrs[0]: addrs[1], addrs[1]: addrs[0]}
	a := queryGet(t, http.MethodGet, other[owner["user3"]], "/v1/jobs/iq/stores/clicks-per-user/keys/user3", "Strata-Query-Forwarded", "test")
	if msg, _ := a.body["error"].(string); a.status != http.StatusServiceUnavailable || !strings.Contains(msg, "not open on this instance") {
		t.Errorf("forwarded request to the non-owner: %d %v, want 503", a.status, a.body)
	}

	// A window query, the bounds in epoch ms and RFC 3339.
	for user, want := range windows {
		for _, addr := range addrs {
			path := fmt.Sprintf("/v1/jobs/iq/stores/clicks-per-second/keys/%s/windows?from=%d&to=%s", user,
				base.UnixMilli(), url.QueryEscape(base.Add(9*time.Second).UTC().Format(time.RFC3339)))
			a := queryGet(t, http.MethodGet, addr, path)
			got, _ := a.body["windows"].([]any)
			if a.status != http.StatusOK || len(got) != 10 {
				t.Fatalf("%s: %d %v, want 10 windows", path, a.status, a.body)
			}
			for _, w := range got {
				w := w.(map[string]any)
				start := int64(w["start"].(float64))
				if w["value"] != float64(want[start]) || int64(w["end"].(float64)) != start+1000 {
					t.Fatalf("%s: window %v, want count %d", path, w, want[start])
				}
			}
		}
	}

	// Range queries gather every instance's partitions.
	a = queryGet(t, http.MethodGet, addrs[0], "/v1/jobs/iq/stores/clicks-per-user/keys?from=user1&to=user15&limit=1000")
	entries, _ := a.body["entries"].([]any)
	// user1, user10..user15 (byte order).
	if a.status != http.StatusOK || len(entries) != 7 || a.body["missing_partitions"] != nil || a.body["truncated"] != false {
		t.Fatalf("range: %d %v", a.status, a.body)
	}
	for i, e := range entries {
		e := e.(map[string]any)
		want := "user1"
		if i > 0 {
			want = fmt.Sprintf("user1%d", i-1)
		}
		if e["key"] != want || e["value"] != float64(counts[want]) {
			t.Fatalf("range entry %d: %v, want %s=%d", i, e, want, counts[want])
		}
	}
	a = queryGet(t, http.MethodGet, addrs[1], "/v1/jobs/iq/stores/clicks-per-user/keys?limit=3")
	if entries, _ := a.body["entries"].([]any); a.status != http.StatusOK || len(entries) != 3 || a.body["truncated"] != true {
		t.Fatalf("range limit 3: %d %v", a.status, a.body)
	}

	for _, c := range []struct {
		method, path string
		status       int
		errorHas     string
	}{
		{"GET", "/v1/jobs/iq/stores/clicks-per-user/keys/nobody", 404, "not found"},
		{"GET", "/v1/jobs/iq/stores/no-such-store/keys/user1", 404, "unknown store"},
		{"GET", "/v1/jobs/other/stores/clicks-per-user/keys/user1", 404, "unknown job"},
		{"GET", "/v1/jobs/iq/stores/clicks-per-user/keys?limit=0", 400, "limit"},
		{"GET", "/v1/jobs/iq/stores/clicks-per-user/keys?from=b&to=a", 400, "from is after to"},
		{"GET", "/v1/jobs/iq/stores/clicks-per-second/keys/user1/windows?from=yesterday", 400, "from"},
		{"GET", "/v1/jobs/iq/stores/clicks-per-user/keys/user1/windows", 400, "not windowed"},
		{"GET", "/v1/jobs/iq/stores/clicks-per-second/keys/user1", 400, "windowed"},
		{"POST", "/v1/jobs/iq/stores/clicks-per-user/keys/user1", 405, "not allowed"},
		{"GET", "/v1/elsewhere", 404, "no such endpoint"},
	} {
		for _, addr := range addrs {
			a := queryGet(t, c.method, addr, c.path)
			if msg, _ := a.body["error"].(string); a.status != c.status || !strings.Contains(msg, c.errorHas) {
				t.Errorf("%s %s via %s: %d %v, want %d with %q", c.method, c.path, addr, a.status, a.body, c.status, c.errorHas)
			}
		}
	}
	t.Logf("queries done %v after the start", time.Since(start))
	for i, stop := range stops {
		stop()
		t.Logf("instance %d stopped %v after the start", i, time.Since(start))
	}
}
