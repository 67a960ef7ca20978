package broker

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestConsoleOpsAPIErrors: bad input to the console's offset reset,
// config edit and browse filters answers with the right status and a JSON
// error, and changes nothing (checked with kadm).
func TestConsoleOpsAPIErrors(t *testing.T) {
	tb := startTestBroker(t)
	base := "http://" + tb.srv.HTTPAddr()
	adm := kadm.NewClient(tb.client())
	ctx := testContext(t)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "ops"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CommitOffsets(ctx, "idle", kadm.OffsetsFromRecords(kgo.Record{Topic: "ops", Partition: 0, Offset: -1})); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		method, path string
		body         any
		status       int
		code         string
		errorHas     string
	}{
		{name: "reset to nowhere", method: "POST", path: "/api/v1/groups/idle/reset-offsets", body: map[string]any{"to": "yesterday"}, status: 400, errorHas: "earliest, latest"},
		{name: "reset to a time without one", method: "POST", path: "/api/v1/groups/idle/reset-offsets", body: map[string]any{"to": "timestamp"}, status: 400, errorHas: "timestamp"},
		{name: "reset to a negative offset", method: "POST", path: "/api/v1/groups/idle/reset-offsets", body: map[string]any{"to": "offset", "offset": -2}, status: 400, errorHas: "offset"},
		{name: "reset partitions of no topic", method: "POST", path: "/api/v1/groups/idle/reset-offsets", body: map[string]any{"to": "earliest", "partitions": []int{0}}, status: 400, errorHas: "exactly one topic"},
		{name: "reset an unknown topic", method: "POST", path: "/api/v1/groups/idle/reset-offsets", body: map[string]any{"to": "earliest", "topics": []string{"nope"}}, status: 404, code: "UNKNOWN_TOPIC_OR_PARTITION"},
		{name: "reset no such partition", method: "POST", path: "/api/v1/groups/idle/reset-offsets", body: map[string]any{"to": "earliest", "topics": []string{"ops"}, "partitions": []int{9}}, status: 400, code: "INVALID_PARTITIONS"},
		{name: "reset a group without commits", method: "POST", path: "/api/v1/groups/nobody/reset-offsets", body: map[string]any{"to": "earliest"}, status: 400, errorHas: "no committed offsets"},
		{name: "reset by GET", method: "GET", path: "/api/v1/groups/idle/reset-offsets", status: 405, errorHas: "GET"},
		{name: "configs: nothing to change", method: "PATCH", path: "/api/v1/topics/ops/configs", body: map[string]any{}, status: 400, errorHas: "nothing to change"},
		{name: "configs: set and delete", method: "PATCH", path: "/api/v1/topics/ops/configs", body: map[string]any{"set": map[string]string{"retention.ms": "1"}, "delete": []string{"retention.ms"}}, status: 400, code: "INVALID_REQUEST"},
		{name: "configs of an unknown topic", method: "PATCH", path: "/api/v1/topics/nope/configs", body: map[string]any{"set": map[string]string{"retention.ms": "1000"}}, status: 404, code: "UNKNOWN_TOPIC_OR_PARTITION"},
		{name: "configs: an unknown field", method: "PATCH", path: "/api/v1/topics/ops/configs", body: map[string]any{"sett": map[string]string{}}, status: 400, errorHas: "sett"},
		{name: "filter that does not compile", method: "GET", path: "/api/v1/topics/ops/records?filter=value.n+%3E", status: 400, errorHas: "filter"},
		{name: "filter that is not a boolean", method: "GET", path: "/api/v1/topics/ops/records?filter=offset+%2B+1", status: 400, errorHas: "filter"},
		{name: "filter over an unknown name", method: "GET", path: "/api/v1/topics/ops/records?filter=vaule+%3D%3D+1", status: 400, errorHas: "vaule"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := callConsole(t, base, tc.method, tc.path, tc.body, true)
			var e struct{ Error, Code string }
			got.decode(t, &e)
			if got.status != tc.status || e.Code != tc.code || e.Error == "" || !strings.Contains(e.Error, tc.errorHas) {
				t.Fatalf("%s %s: %d %s; want %d code %q error containing %q", tc.method, tc.path, got.status, got.body, tc.status, tc.code, tc.errorHas)
			}
		})
	}
	offsets, err := adm.FetchOffsets(ctx, "idle")
	if o, ok := offsets.Lookup("ops", 0); err != nil || !ok || o.At != 0 {
		t.Fatalf("idle's offsets after the refused resets: %+v %v", offsets, err)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rcs[0].Configs {
		if c.Key == "retention.ms" && c.Source.String() == "DYNAMIC_TOPIC_CONFIG" {
			t.Fatalf("retention.ms changed by a refused edit: %+v", c)
		}
	}
}

// resetAnswer mirrors POST /api/v1/groups/{group}/reset-offsets.
type resetAnswer struct {
	DryRun, Applied bool
	Offsets         []struct {
		Topic                    string
		Partition                int32
		CurrentOffset, NewOffset int64
		Error                    string
	}
}

// TestConsoleResetOffsets: a dry run answers the new offsets and commits
// nothing, applying commits them (both checked with kadm FetchOffsets),
// offsets are clamped to the log, and a group with an active member is
// refused with 409. The group's page has lag in seconds, the evaluator's
// status and a history.
func TestConsoleResetOffsets(t *testing.T) {
	tb := startTestBroker(t)
	base := "http://" + tb.srv.HTTPAddr()
	cl := tb.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	ctx := testContext(t)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "pay"); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	for i := range 10 {
		ts := old
		if i >= 5 {
			ts = time.Now()
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "pay", Partition: int32(i % 2), Value: []byte(fmt.Sprint(i)), Timestamp: ts}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	commit := kadm.Offsets{}
	commit.Add(kadm.Offset{Topic: "pay", Partition: 0, At: 2, LeaderEpoch: -1})
	commit.Add(kadm.Offset{Topic: "pay", Partition: 1, At: 4, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(ctx, "batch", commit); err != nil {
		t.Fatal(err)
	}
	fetched := func() map[int32]int64 {
		t.Helper()
		os, err := adm.FetchOffsets(ctx, "batch")
		if err != nil || os.Error() != nil {
			t.Fatalf("kadm FetchOffsets: %v %v", err, os.Error())
		}
		out := map[int32]int64{}
		os.Each(func(o kadm.OffsetResponse) { out[o.Partition] = o.At })
		return out
	}

	// The group page: lag in records and seconds, status, history.
	var group struct {
		TotalLag      int64
		MaxLagSeconds float64
		Status        string
		Offsets       []struct {
			Partition  int32
			Lag        int64
			LagSeconds float64
			Status     string
		}
		History []struct {
			T       int64
			Records int64
		}
	}
	callConsole(t, base, "GET", "/api/v1/groups/batch", nil, false).decode(t, &group)
	if group.TotalLag != 4 || group.Status == "" || group.MaxLagSeconds < 50 || len(group.History) != 1 || group.History[0].Records != 4 ||
		len(group.Offsets) != 2 || group.Offsets[0].LagSeconds < 50 || group.Offsets[1].Lag != 1 || group.Offsets[1].Status == "" {
		t.Fatalf("group batch: %+v", group)
	}

	// A dry run to the earliest offsets changes nothing.
	var ans resetAnswer
	got := callConsole(t, base, "POST", "/api/v1/groups/batch/reset-offsets", map[string]any{"to": "earliest", "dryRun": true}, true)
	got.decode(t, &ans)
	if got.status != 200 || !ans.DryRun || ans.Applied || len(ans.Offsets) != 2 ||
		ans.Offsets[0].CurrentOffset != 2 || ans.Offsets[0].NewOffset != 0 || ans.Offsets[1].CurrentOffset != 4 || ans.Offsets[1].NewOffset != 0 {
		t.Fatalf("dry run: %d %s", got.status, got.body)
	}
	if f := fetched(); f[0] != 2 || f[1] != 4 {
		t.Fatalf("kadm sees %v after a dry run", f)
	}
	// Applied, kadm sees the new offsets.
	got = callConsole(t, base, "POST", "/api/v1/groups/batch/reset-offsets", map[string]any{"to": "earliest"}, true)
	got.decode(t, &ans)
	if got.status != 200 || ans.DryRun || !ans.Applied {
		t.Fatalf("apply: %d %s", got.status, got.body)
	}
	if f := fetched(); f[0] != 0 || f[1] != 0 {
		t.Fatalf("kadm sees %v after resetting to the earliest", f)
	}
	// To an offset past the end of one partition: clamped to its end.
	callConsole(t, base, "POST", "/api/v1/groups/batch/reset-offsets", map[string]any{"to": "offset", "offset": 4, "topics": []string{"pay"}}, true).decode(t, &ans)
	if f := fetched(); !ans.Applied || f[0] != 4 || f[1] != 4 {
		t.Fatalf("kadm sees %v after resetting to offset 4 (%+v)", f, ans)
	}
	callConsole(t, base, "POST", "/api/v1/groups/batch/reset-offsets", map[string]any{"to": "offset", "offset": 9, "topics": []string{"pay"}, "partitions": []int{1}}, true).decode(t, &ans)
	if f := fetched(); !ans.Applied || len(ans.Offsets) != 1 || f[0] != 4 || f[1] != 5 {
		t.Fatalf("kadm sees %v after resetting partition 1 past its end (%+v)", f, ans)
	}
	// To a time between the old and the new records: the first new one.
	callConsole(t, base, "POST", "/api/v1/groups/batch/reset-offsets", map[string]any{"to": "timestamp", "timestamp": old.Add(30 * time.Second).UnixMilli()}, true).decode(t, &ans)
	if f := fetched(); !ans.Applied || f[0] != 3 || f[1] != 2 {
		t.Fatalf("kadm sees %v after resetting to a time (%+v)", f, ans)
	}
	callConsole(t, base, "POST", "/api/v1/groups/batch/reset-offsets", map[string]any{"to": "latest"}, true).decode(t, &ans)
	if f := fetched(); !ans.Applied || f[0] != 5 || f[1] != 5 {
		t.Fatalf("kadm sees %v after resetting to the latest (%+v)", f, ans)
	}

	// A group with an active member is refused, dry run or not.
	member := tb.client(kgo.ConsumerGroup("live"), kgo.ConsumeTopics("pay"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	waitFor(t, 20*time.Second, "the live group's member to join", func() bool {
		pollCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		member.PollFetches(pollCtx)
		cancel()
		d, err := adm.DescribeGroups(ctx, "live")
		return err == nil && d["live"].State == "Stable"
	})
	for _, dry := range []bool{true, false} {
		got := callConsole(t, base, "POST", "/api/v1/groups/live/reset-offsets", map[string]any{"to": "earliest", "topics": []string{"pay"}, "dryRun": dry}, true)
		var e struct{ Error, Code string }
		got.decode(t, &e)
		if got.status != 409 || e.Code != "NON_EMPTY_GROUP" || !strings.Contains(e.Error, "Stable") {
			t.Fatalf("reset of a group with a member (dry run %v): %d %s", dry, got.status, got.body)
		}
	}
}

// TestConsoleTopicConfigs: an edit is validated first (nothing changes,
// kadm DescribeTopicConfigs), invalid values are named per key, then the
// edit applies and a delete returns a config to its default.
func TestConsoleTopicConfigs(t *testing.T) {
	tb := startTestBroker(t)
	base := "http://" + tb.srv.HTTPAddr()
	adm := kadm.NewClient(tb.client())
	ctx := testContext(t)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "cfg"); err != nil {
		t.Fatal(err)
	}
	dynamic := func() map[string]string {
		t.Helper()
		rcs, err := adm.DescribeTopicConfigs(ctx, "cfg")
		if err != nil || rcs[0].Err != nil {
			t.Fatalf("kadm DescribeTopicConfigs: %v %+v", err, rcs)
		}
		out := map[string]string{}
		for _, c := range rcs[0].Configs {
			if c.Source.String() == "DYNAMIC_TOPIC_CONFIG" {
				out[c.Key] = c.MaybeValue()
			}
		}
		return out
	}
	change := map[string]any{"set": map[string]string{"retention.ms": "7200000", "cleanup.policy": "compact"}, "validateOnly": true}
	got := callConsole(t, base, "PATCH", "/api/v1/topics/cfg/configs", change, true)
	var ok struct {
		ValidateOnly bool
		Changed      []string
	}
	got.decode(t, &ok)
	if got.status != 200 || !ok.ValidateOnly || strings.Join(ok.Changed, ",") != "cleanup.policy,retention.ms" {
		t.Fatalf("validate: %d %s", got.status, got.body)
	}
	if d := dynamic(); len(d) != 0 {
		t.Fatalf("a validate-only edit changed %v", d)
	}

	bad := map[string]any{"set": map[string]string{"retention.ms": "soon", "cleanup.policy": "sometimes", "segment.ms": "600000"}, "validateOnly": true}
	got = callConsole(t, base, "PATCH", "/api/v1/topics/cfg/configs", bad, true)
	var refused struct {
		Error, Code  string
		ConfigErrors []struct{ Name, Error, Code string }
	}
	got.decode(t, &refused)
	if got.status != 400 || refused.Code != "INVALID_CONFIG" || len(refused.ConfigErrors) != 2 ||
		refused.ConfigErrors[0].Name != "cleanup.policy" || refused.ConfigErrors[1].Name != "retention.ms" || refused.ConfigErrors[0].Error == "" {
		t.Fatalf("invalid values: %d %s", got.status, got.body)
	}

	change["validateOnly"] = false
	if got := callConsole(t, base, "PATCH", "/api/v1/topics/cfg/configs", change, true); got.status != 200 {
		t.Fatalf("apply: %d %s", got.status, got.body)
	}
	if d := dynamic(); d["retention.ms"] != "7200000" || d["cleanup.policy"] != "compact" {
		t.Fatalf("kadm sees %v after the edit", d)
	}
	if got := callConsole(t, base, "PATCH", "/api/v1/topics/cfg/configs", map[string]any{"delete": []string{"cleanup.policy"}}, true); got.status != 200 {
		t.Fatalf("delete: %d %s", got.status, got.body)
	}
	if d := dynamic(); d["retention.ms"] != "7200000" || d["cleanup.policy"] != "" {
		t.Fatalf("kadm sees %v after deleting cleanup.policy", d)
	}
	// The detail page has each partition's local size.
	var topic struct {
		Partitions []struct{ LocalBytes, RemoteBytes int64 }
	}
	callConsole(t, base, "GET", "/api/v1/topics/cfg", nil, false).decode(t, &topic)
	if len(topic.Partitions) != 1 || topic.Partitions[0].LocalBytes < 0 || topic.Partitions[0].RemoteBytes != -1 {
		t.Fatalf("topic sizes: %+v", topic)
	}
}

// TestConsoleRecordFilter: browsing with a key substring or an expression
// answers only the kgo-produced records that match, and says how many it
// examined.
func TestConsoleRecordFilter(t *testing.T) {
	tb := startTestBroker(t)
	base := "http://" + tb.srv.HTTPAddr()
	cl := tb.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx := testContext(t)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "clicks"); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := range 30 {
		src := "web"
		if i%3 == 0 {
			src = "app"
		}
		recs = append(recs, &kgo.Record{Topic: "clicks", Key: []byte(fmt.Sprintf("user-%d", i)), Value: []byte(fmt.Sprintf(`{"n": %d, "page": "/p%d"}`, i, i%5)),
			Headers: []kgo.RecordHeader{{Key: "source", Value: []byte(src)}}})
	}
	recs = append(recs, &kgo.Record{Topic: "clicks", Value: []byte("not json")})
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	type page struct {
		NextOffset, HighWatermark int64
		Scanned                   int
		StoppedBy                 string
		FilterErrors              int
		Records                   []struct {
			Offset int64
			Key    *struct{ Data string }
		}
	}
	offsets := func(p page) []int64 {
		var out []int64
		for _, r := range p.Records {
			out = append(out, r.Offset)
		}
		return out
	}
	for _, tc := range []struct {
		query   url.Values
		want    []int64
		scanned int
		next    int64
	}{
		{query: url.Values{"key": {"user-2"}}, want: []int64{2, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29}, scanned: 31, next: 31},
		{query: url.Values{"key": {"user-1"}, "limit": {"3"}}, want: []int64{1, 10, 11}, scanned: 12, next: 12},
		{query: url.Values{"filter": {`value.n >= 25`}}, want: []int64{25, 26, 27, 28, 29}, scanned: 31, next: 31},
		{query: url.Values{"filter": {`headers.source == "app" and value.page == "/p0"`}}, want: []int64{0, 15}, scanned: 31, next: 31},
		{query: url.Values{"key": {"user"}, "filter": {`value.n < 3 or key endsWith "9"`}}, want: []int64{0, 1, 2, 9, 19, 29}, scanned: 31, next: 31},
		{query: url.Values{"filter": {`value == "not json"`}, "offset": {"20"}}, want: []int64{30}, scanned: 11, next: 31},
		{query: url.Values{"filter": {`timestamp > now() - duration("1h") and offset % 10 == 0`}}, want: []int64{0, 10, 20, 30}, scanned: 31, next: 31},
	} {
		var p page
		got := callConsole(t, base, "GET", "/api/v1/topics/clicks/records?"+tc.query.Encode(), nil, false)
		got.decode(t, &p)
		if got.status != 200 || fmt.Sprint(offsets(p)) != fmt.Sprint(tc.want) || p.Scanned != tc.scanned || p.NextOffset != tc.next || p.StoppedBy != "" {
			t.Errorf("%v: %d %v scanned %d next %d stopped by %q; want %v scanned %d next %d (%s)",
				tc.query, got.status, offsets(p), p.Scanned, p.NextOffset, p.StoppedBy, tc.want, tc.scanned, tc.next, got.body)
		}
	}
	// An expression that fails on a record does not match it, and says so.
	var p page
	callConsole(t, base, "GET", "/api/v1/topics/clicks/records?"+url.Values{"filter": {"value.n > 28"}}.Encode(), nil, false).decode(t, &p)
	if fmt.Sprint(offsets(p)) != "[29]" || p.FilterErrors != 1 {
		t.Fatalf("value.n > 28 over a text value: %+v", p)
	}
}

// TestConsoleTieredPartition: a tiered topic's detail shows what is in
// the bucket — its size, the offset after its last uploaded record and
// how many records are not there yet — as the node's manifest has them.
func TestConsoleTieredPartition(t *testing.T) {
	tb := tieredBroker(t, func(c *Config) {
		c.RemoteLogTaskIntervalMs = 1 << 30 // uploads on roll only
		c.LogRetentionCheckIntervalMs = 1 << 30
	})
	tb.createTopic("tiered", 1, tieredTopicConfigs())
	produceValues(t, tb.client(kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16<<10)), "tiered", 2000)
	p := tb.srv.topics.partition("tiered", 0)
	waitFor(t, 20*time.Second, "sealed segments uploaded", func() bool {
		m := p.remote.manifest.Load()
		return m != nil && len(m.Segments) >= 3
	})
	base := "http://" + tb.srv.HTTPAddr()
	var topic struct {
		Partitions []struct {
			HighWatermark, RemoteBytes, RemoteEndOffset, UploadLag int64
		}
	}
	// The manifest may move between the page and this look: retry until
	// both agree.
	waitFor(t, 20*time.Second, "the page agreeing with the manifest", func() bool {
		callConsole(t, base, "GET", "/api/v1/topics/tiered", nil, false).decode(t, &topic)
		m := p.remote.manifest.Load()
		if len(topic.Partitions) != 1 {
			t.Fatalf("partitions: %+v", topic)
		}
		got := topic.Partitions[0]
		return got.RemoteBytes == m.Bytes() && got.RemoteEndOffset == m.NextOffset()
	})
	got := topic.Partitions[0]
	if got.HighWatermark != 2000 || got.RemoteBytes <= 0 || got.RemoteEndOffset <= 0 || got.RemoteEndOffset > 2000 ||
		got.UploadLag != got.HighWatermark-got.RemoteEndOffset {
		t.Fatalf("tiered partition: %+v", got)
	}
}
