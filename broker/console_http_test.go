package broker

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/broker/console"
)

// consoleCall is one request to the console API and what came back.
type consoleCall struct {
	status int
	body   []byte
}

// decode unmarshals the answer into v, failing the test on bad JSON.
func (c consoleCall) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(c.body, v); err != nil {
		t.Fatalf("answer %d is not JSON (%v): %s", c.status, err, c.body)
	}
}

// callConsole sends method path with a JSON body (nil: none), the CSRF
// header when csrf, and whatever more sets; it fails the test only when
// the request cannot be made.
func callConsole(t *testing.T, base, method, path string, body any, csrf bool, more ...func(*http.Request)) consoleCall {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		js, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if csrf {
		req.Header.Set(console.CSRFHeader, "1")
	}
	for _, f := range more {
		f(req)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return consoleCall{status: resp.StatusCode, body: b}
}

// TestConsoleAPIErrors: bad input to the console API answers with the
// right HTTP status and a JSON error naming the Kafka error when there is
// one; nothing changes in the cluster (checked with kadm).
func TestConsoleAPIErrors(t *testing.T) {
	tb := startTestBroker(t)
	base := "http://" + tb.srv.HTTPAddr()
	adm := kadm.NewClient(tb.client())
	ctx := testContext(t)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "existing"); err != nil {
		t.Fatal(err)
	}
	origin := func(o string) func(*http.Request) { return func(r *http.Request) { r.Header.Set("Origin", o) } }
	for _, tc := range []struct {
		name         string
		method, path string
		body         any
		noCSRF       bool
		more         func(*http.Request)
		status       int
		code         string // Kafka error name, "" for none
		errorHas     string
	}{
		{name: "unknown topic", method: "GET", path: "/api/v1/topics/nope", status: 404, code: "UNKNOWN_TOPIC_OR_PARTITION", errorHas: `"nope" not found`},
		{name: "records of an unknown topic", method: "GET", path: "/api/v1/topics/nope/records", status: 404, code: "UNKNOWN_TOPIC_OR_PARTITION"},
		{name: "delete an unknown topic", method: "DELETE", path: "/api/v1/topics/nope", status: 404, code: "UNKNOWN_TOPIC_OR_PARTITION"},
		{name: "produce to an unknown topic", method: "POST", path: "/api/v1/topics/nope/records", body: map[string]any{"value": map[string]string{"data": "x"}}, status: 404, code: "UNKNOWN_TOPIC_OR_PARTITION"},
		{name: "zero partitions", method: "POST", path: "/api/v1/topics", body: map[string]any{"name": "t0", "partitions": 0}, status: 400, code: "INVALID_PARTITIONS"},
		{name: "negative replication", method: "POST", path: "/api/v1/topics", body: map[string]any{"name": "t0", "replicationFactor": -3}, status: 400, code: "INVALID_REPLICATION_FACTOR"},
		{name: "replication above the node count", method: "POST", path: "/api/v1/topics", body: map[string]any{"name": "t0", "partitions": 1, "replicationFactor": 3}, status: 400, code: "INVALID_REPLICATION_FACTOR"},
		{name: "illegal topic name", method: "POST", path: "/api/v1/topics", body: map[string]any{"name": "a b"}, status: 400, code: "INVALID_TOPIC_EXCEPTION"},
		{name: "invalid config", method: "POST", path: "/api/v1/topics", body: map[string]any{"name": "t0", "configs": map[string]string{"cleanup.policy": "sometimes"}}, status: 400, code: "INVALID_CONFIG"},
		{name: "topic exists", method: "POST", path: "/api/v1/topics", body: map[string]any{"name": "existing"}, status: 409, code: "TOPIC_ALREADY_EXISTS"},
		{name: "not JSON", method: "POST", path: "/api/v1/topics", body: "{name:", status: 400, errorHas: "invalid JSON"},
		{name: "unknown field", method: "POST", path: "/api/v1/topics", body: map[string]any{"name": "t0", "partitons": 2}, status: 400, errorHas: "partitons"},
		{name: "create without the CSRF header", method: "POST", path: "/api/v1/topics", body: map[string]any{"name": "t0"}, noCSRF: true, status: 403, errorHas: console.CSRFHeader},
		{name: "delete without the CSRF header", method: "DELETE", path: "/api/v1/topics/existing", noCSRF: true, status: 403, errorHas: console.CSRFHeader},
		{name: "create from another origin", method: "POST", path: "/api/v1/topics", body: map[string]any{"name": "t0"}, more: origin("http://evil.example"), status: 403, errorHas: "origin"},
		{name: "bad offset", method: "GET", path: "/api/v1/topics/existing/records?offset=abc", status: 400, errorHas: "offset"},
		{name: "negative offset", method: "GET", path: "/api/v1/topics/existing/records?offset=-5", status: 400, errorHas: "offset"},
		{name: "two starts", method: "GET", path: "/api/v1/topics/existing/records?offset=1&fromEnd=true", status: 400, errorHas: "at most one"},
		{name: "limit too high", method: "GET", path: "/api/v1/topics/existing/records?limit=100000", status: 400, errorHas: "limit"},
		{name: "no such partition", method: "GET", path: "/api/v1/topics/existing/records?partition=7", status: 400, code: "INVALID_PARTITIONS"},
		{name: "produce to no such partition", method: "POST", path: "/api/v1/topics/existing/records", body: map[string]any{"partition": 7, "value": map[string]string{"data": "x"}}, status: 400, code: "INVALID_PARTITIONS"},
		{name: "bad base64", method: "POST", path: "/api/v1/topics/existing/records", body: map[string]any{"value": map[string]string{"encoding": "base64", "data": "%%%"}}, status: 400, errorHas: "base64"},
		{name: "page size zero", method: "GET", path: "/api/v1/topics?pageSize=0", status: 400, errorHas: "pageSize"},
		{name: "unknown group", method: "GET", path: "/api/v1/groups/nobody", status: 404, code: "GROUP_ID_NOT_FOUND"},
		{name: "wrong method", method: "PUT", path: "/api/v1/cluster", body: "{}", status: 405, errorHas: "PUT"},
		{name: "no such endpoint", method: "GET", path: "/api/v1/brokers/1", status: 404, errorHas: "no such endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var more []func(*http.Request)
			if tc.more != nil {
				more = append(more, tc.more)
			}
			got := callConsole(t, base, tc.method, tc.path, tc.body, !tc.noCSRF, more...)
			var e struct{ Error, Code string }
			got.decode(t, &e)
			if got.status != tc.status || e.Code != tc.code || e.Error == "" || !strings.Contains(e.Error, tc.errorHas) {
				t.Fatalf("%s %s: %d %s; want %d code %q error containing %q", tc.method, tc.path, got.status, got.body, tc.status, tc.code, tc.errorHas)
			}
		})
	}
	// Nothing was created or deleted.
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if names := topics.Names(); len(names) != 1 || names[0] != "existing" {
		t.Fatalf("topics after the refused requests: %v", names)
	}
}

// TestConsoleAPIAgainstKafkaClients: what the console API does is seen by
// kadm and kgo, and what kgo does is seen by the API.
func TestConsoleAPIAgainstKafkaClients(t *testing.T) {
	tb := startTestBroker(t)
	base := "http://" + tb.srv.HTTPAddr()
	cl := tb.client()
	adm := kadm.NewClient(cl)
	ctx := testContext(t)

	// A topic created through the API, seen by kadm.
	created := callConsole(t, base, "POST", "/api/v1/topics", map[string]any{
		"name": "orders", "partitions": 3, "replicationFactor": 1, "configs": map[string]string{"retention.ms": "3600000"},
	}, true)
	if created.status != 201 {
		t.Fatalf("create: %d %s", created.status, created.body)
	}
	details, err := adm.ListTopics(ctx, "orders")
	if err != nil || details["orders"].Err != nil || len(details["orders"].Partitions) != 3 {
		t.Fatalf("kadm sees %+v, %v", details["orders"], err)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := rcs.On("orders", nil); err != nil || !hasConfig(c.Configs, "retention.ms", "3600000") {
		t.Fatalf("kadm sees configs %+v, %v", c, err)
	}

	// A record produced through the API, consumed by kgo.
	produced := callConsole(t, base, "POST", "/api/v1/topics/orders/records", map[string]any{
		"partition": 2,
		"key":       map[string]string{"data": "order-1"},
		"value":     map[string]string{"encoding": "base64", "data": base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 0xff})},
		"headers":   []map[string]any{{"key": "source", "value": map[string]string{"data": "console"}}},
	}, true)
	var where struct{ Partition, Offset int64 }
	produced.decode(t, &where)
	if produced.status != 201 || where.Partition != 2 || where.Offset != 0 {
		t.Fatalf("produce: %d %s", produced.status, produced.body)
	}
	consumer := tb.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"orders": {2: kgo.NewOffset().AtStart()}}))
	fetchCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	fetches := consumer.PollFetches(fetchCtx)
	cancel()
	recs := fetches.Records()
	if len(recs) != 1 || string(recs[0].Key) != "order-1" || !bytes.Equal(recs[0].Value, []byte{0, 1, 2, 0xff}) ||
		len(recs[0].Headers) != 1 || string(recs[0].Headers[0].Value) != "console" {
		t.Fatalf("kgo consumed %+v (errors %v)", recs, fetches.Errors())
	}

	// Records produced by kgo, read through the API: text, JSON, binary.
	before := time.Now().Add(-time.Second)
	producer := tb.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for _, v := range []string{`{"id": 7}`, "plain text", "\xff\xfe"} {
		if err := producer.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: 0, Value: []byte(v), Headers: []kgo.RecordHeader{{Key: "n", Value: []byte("1")}}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var page struct {
		HighWatermark, NextOffset int64
		Records                   []struct {
			Offset int64
			Key    *struct{ Encoding, Data string }
			Value  struct {
				Encoding, Data string
				JSON           bool
			}
			Headers []struct{ Key string }
		}
	}
	callConsole(t, base, "GET", "/api/v1/topics/orders/records?partition=0", nil, false).decode(t, &page)
	if len(page.Records) != 3 || page.HighWatermark != 3 || page.NextOffset != 3 ||
		page.Records[0].Value.Data != `{"id": 7}` || !page.Records[0].Value.JSON ||
		page.Records[1].Value.Data != "plain text" || page.Records[1].Value.JSON || page.Records[1].Value.Encoding != "text" ||
		page.Records[2].Value.Encoding != "base64" || page.Records[2].Value.Data != base64.StdEncoding.EncodeToString([]byte("\xff\xfe")) ||
		page.Records[0].Key != nil || len(page.Records[0].Headers) != 1 {
		t.Fatalf("browse from the start: %+v", page)
	}
	callConsole(t, base, "GET", "/api/v1/topics/orders/records?partition=0&fromEnd=true&limit=1", nil, false).decode(t, &page)
	if len(page.Records) != 1 || page.Records[0].Offset != 2 {
		t.Fatalf("browse the end: %+v", page)
	}
	callConsole(t, base, "GET", "/api/v1/topics/orders/records?partition=0&offset=1&limit=1", nil, false).decode(t, &page)
	if len(page.Records) != 1 || page.Records[0].Offset != 1 || page.NextOffset != 2 {
		t.Fatalf("browse from offset 1: %+v", page)
	}
	callConsole(t, base, "GET", "/api/v1/topics/orders/records?partition=0&timestamp="+itoa64(before.UnixMilli()), nil, false).decode(t, &page)
	if len(page.Records) != 3 {
		t.Fatalf("browse from a time before the records: %+v", page)
	}
	callConsole(t, base, "GET", "/api/v1/topics/orders/records?partition=0&timestamp="+itoa64(time.Now().Add(time.Hour).UnixMilli()), nil, false).decode(t, &page)
	if len(page.Records) != 0 {
		t.Fatalf("browse from a time after the records: %+v", page)
	}

	// The topic's detail: partitions with offsets, configs with source.
	var topic struct {
		Partitions []struct {
			Partition                     int32
			Leader                        int32
			Replicas, ISR                 []int32
			LogStartOffset, HighWatermark int64
		}
		Configs []struct{ Name, Source string }
	}
	callConsole(t, base, "GET", "/api/v1/topics/orders", nil, false).decode(t, &topic)
	if len(topic.Partitions) != 3 || topic.Partitions[0].HighWatermark != 3 || topic.Partitions[2].HighWatermark != 1 ||
		topic.Partitions[1].Leader != tb.cfg.NodeID || len(topic.Partitions[1].ISR) != 1 {
		t.Fatalf("topic detail: %+v", topic)
	}
	sources := map[string]string{}
	for _, c := range topic.Configs {
		sources[c.Name] = c.Source
	}
	if sources["retention.ms"] != "DYNAMIC_TOPIC_CONFIG" || sources["cleanup.policy"] == "" {
		t.Fatalf("config sources: %v", sources)
	}

	// A group that kgo committed in, with its lag.
	if _, err := adm.CommitOffsets(ctx, "billing", kadm.OffsetsFromRecords(kgo.Record{Topic: "orders", Partition: 0, Offset: 0})); err != nil {
		t.Fatal(err)
	}
	var group struct {
		Group, State string
		TotalLag     int64
		Offsets      []struct {
			Topic                              string
			Partition                          int32
			CommittedOffset, LogEndOffset, Lag int64
		}
	}
	callConsole(t, base, "GET", "/api/v1/groups/billing", nil, false).decode(t, &group)
	// kadm's lag covers every partition of a topic the group committed in
	// (lag from the log start where it has no commit), as clients see it.
	if group.State != "Empty" || group.TotalLag != 3 || len(group.Offsets) != 3 ||
		group.Offsets[0].CommittedOffset != 1 || group.Offsets[0].LogEndOffset != 3 || group.Offsets[0].Lag != 2 {
		t.Fatalf("group billing: %+v", group)
	}
	var groups struct{ Groups []struct{ Group string } }
	callConsole(t, base, "GET", "/api/v1/groups", nil, false).decode(t, &groups)
	if len(groups.Groups) != 1 || groups.Groups[0].Group != "billing" {
		t.Fatalf("groups: %+v", groups)
	}

	// The cluster, the list, then deletes seen by kadm.
	var cluster struct {
		ClusterID                 string
		Controller                int32
		Nodes                     []struct{ NodeID int32 }
		Topics, Partitions        int
		UnderReplicatedPartitions int
		OfflinePartitions         int
	}
	callConsole(t, base, "GET", "/api/v1/cluster", nil, false).decode(t, &cluster)
	if cluster.ClusterID == "" || len(cluster.Nodes) != 1 || cluster.Topics < 2 || cluster.Partitions < 4 || cluster.OfflinePartitions != 0 {
		t.Fatalf("cluster: %+v", cluster)
	}
	var list struct {
		Topics []struct{ Name string }
		Total  int
	}
	callConsole(t, base, "GET", "/api/v1/topics?search=ORD&pageSize=1", nil, false).decode(t, &list)
	if list.Total != 1 || len(list.Topics) != 1 || list.Topics[0].Name != "orders" {
		t.Fatalf("search: %+v", list)
	}
	if got := callConsole(t, base, "DELETE", "/api/v1/groups/billing", nil, true); got.status != 204 {
		t.Fatalf("delete group: %d %s", got.status, got.body)
	}
	if listed, err := adm.ListGroups(ctx); err != nil || len(listed) != 0 {
		t.Fatalf("kadm sees groups %v, %v", listed, err)
	}
	if got := callConsole(t, base, "DELETE", "/api/v1/topics/orders", nil, true); got.status != 204 {
		t.Fatalf("delete topic: %d %s", got.status, got.body)
	}
	waitFor(t, 10*time.Second, "kadm to see orders deleted", func() bool {
		d, err := adm.ListTopics(ctx, "orders")
		return err == nil && d["orders"].Err != nil
	})
}

func hasConfig(cs []kadm.Config, name, value string) bool {
	for _, c := range cs {
		if c.Key == name && c.MaybeValue() == value {
			return true
		}
	}
	return false
}

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }

// TestConsoleSecurity: the console and its API sit behind the admin
// listener's authentication and authorizer like /metrics: no credentials
// is 401, reading needs DESCRIBE on the cluster and changing needs ALTER
// (each refused with 403 until an ACL grants it), and the CSRF header is
// still required of an authorized user.
func TestConsoleSecurity(t *testing.T) {
	users := filepath.Join(t.TempDir(), "http-users")
	if err := os.WriteFile(users, []byte("ops=ops-pw\nviewer=viewer-pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tb := startTestBroker(t, func(c *Config) {
		mustSet(t, c,
			"admin.http.auth.basic.users.file", users,
			"authorizer.class.name", "strata",
			"super.users", "User:ops;User:ANONYMOUS",
		)
	})
	base := "http://" + tb.srv.HTTPAddr()
	basic := func(u, p string) func(*http.Request) { return func(r *http.Request) { r.SetBasicAuth(u, p) } }
	ops, viewer := basic("ops", "ops-pw"), basic("viewer", "viewer-pw")
	create := func(name string) map[string]any { return map[string]any{"name": name, "partitions": 1} }

	for _, path := range []string{"/", "/app.js", "/api/v1/cluster", "/api/v1/topics"} {
		if got := callConsole(t, base, "GET", path, nil, false); got.status != 401 {
			t.Fatalf("GET %s without credentials: %d", path, got.status)
		}
	}
	if got := callConsole(t, base, "POST", "/api/v1/topics", create("anon"), true); got.status != 401 {
		t.Fatalf("POST without credentials: %d", got.status)
	}
	if got := callConsole(t, base, "GET", "/api/v1/cluster", nil, false, viewer); got.status != 403 || !strings.Contains(string(got.body), "DESCRIBE") {
		t.Fatalf("viewer without an ACL: %d %s", got.status, got.body)
	}
	if got := callConsole(t, base, "GET", "/", nil, false, viewer); got.status != 403 {
		t.Fatalf("viewer without an ACL, the UI: %d", got.status)
	}
	if got := callConsole(t, base, "GET", "/", nil, false, ops); got.status != 200 || !strings.Contains(string(got.body), "app.js") {
		t.Fatalf("the super user, the UI: %d %s", got.status, got.body)
	}
	adm := kadm.NewClient(tb.client())
	ctx := testContext(t)
	grant := func(op kadm.ACLOperation) {
		t.Helper()
		if res, err := adm.CreateACLs(ctx, kadm.NewACLs().Allow("User:viewer").AllowHosts("*").Clusters().Operations(op)); err != nil || res[0].Err != nil {
			t.Fatalf("grant %v: %v %+v", op, err, res)
		}
	}
	grant(kadm.OpDescribe)
	waitFor(t, 10*time.Second, "viewer's DESCRIBE to apply", func() bool {
		return callConsole(t, base, "GET", "/api/v1/cluster", nil, false, viewer).status == 200
	})
	if got := callConsole(t, base, "POST", "/api/v1/topics", create("by-viewer"), true, viewer); got.status != 403 || !strings.Contains(string(got.body), "ALTER") {
		t.Fatalf("viewer creating with DESCRIBE only: %d %s", got.status, got.body)
	}
	grant(kadm.OpAlter)
	waitFor(t, 10*time.Second, "viewer's ALTER to apply", func() bool {
		return callConsole(t, base, "POST", "/api/v1/topics", create("by-viewer"), true, viewer).status == 201
	})
	if got := callConsole(t, base, "DELETE", "/api/v1/topics/by-viewer", nil, false, viewer); got.status != 403 {
		t.Fatalf("authorized delete without the CSRF header: %d %s", got.status, got.body)
	}
	if got := callConsole(t, base, "DELETE", "/api/v1/topics/by-viewer", nil, true, viewer, func(r *http.Request) { r.Header.Set("Origin", base) }); got.status != 204 {
		t.Fatalf("authorized delete from the same origin: %d %s", got.status, got.body)
	}
	if got := callConsole(t, base, "POST", "/api/v1/topics", create("by-ops"), true, ops); got.status != 201 {
		t.Fatalf("the super user creating: %d %s", got.status, got.body)
	}
	d, err := adm.ListTopics(ctx)
	if err != nil || !d.Has("by-ops") || d.Has("by-viewer") || d.Has("anon") {
		t.Fatalf("topics after the security checks: %v %v", d.Names(), err)
	}
}
