package broker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// proposalLog records the records a node's metadata client proposes.
type proposalLog struct {
	mu   sync.Mutex
	recs []cluster.Record
}

func logProposals(tb *testBroker) *proposalLog {
	l := &proposalLog{}
	tb.srv.meta.setHook(func(_ context.Context, rec cluster.Record) {
		switch rec.(type) {
		case cluster.BrokerHeartbeat, cluster.AlterPartition, cluster.ElectLeader:
			return // the node's own housekeeping
		}
		l.mu.Lock()
		l.recs = append(l.recs, rec)
		l.mu.Unlock()
	})
	return l
}

// take returns and forgets the records proposed so far.
func (l *proposalLog) take() []cluster.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.recs
	l.recs = nil
	return out
}

// oneBatch fails unless recs is a single TopicBatch of want records.
func oneBatch(t *testing.T, what string, recs []cluster.Record, want int) cluster.TopicBatch {
	t.Helper()
	if len(recs) != 1 {
		t.Fatalf("%s: %d proposals (%T…), want one TopicBatch", what, len(recs), recs)
	}
	b, ok := recs[0].(cluster.TopicBatch)
	if !ok || len(b.Records) != want {
		t.Fatalf("%s: proposed %T with %d records, want a TopicBatch of %d", what, recs[0], len(b.Records), want)
	}
	return b
}

func createTopicsRaw(t *testing.T, cl *kgo.Client, validateOnly bool, topics ...kmsg.CreateTopicsRequestTopic) map[string][]int16 {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 60_000
	req.ValidateOnly = validateOnly
	req.Topics = topics
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]int16{}
	for _, rt := range resp.Topics {
		out[rt.Topic] = append(out[rt.Topic], rt.ErrorCode)
	}
	return out
}

func newTopic(name string, partitions int32, rf int16, configs ...string) kmsg.CreateTopicsRequestTopic {
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, rf
	for i := 0; i+1 < len(configs); i += 2 {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = configs[i], kmsg.StringPtr(configs[i+1])
		rt.Configs = append(rt.Configs, c)
	}
	return rt
}

// TestTopicAdminBatched: one CreateTopics, CreatePartitions or
// DeleteTopics request is one TopicBatch proposal however many topics it
// names, and every topic still gets its own answer (validate_only
// included, which proposes nothing).
func TestTopicAdminBatched(t *testing.T) {
	tb := startTestBroker(t)
	cl := tb.client()
	adm := kadm.NewClient(cl)
	ctx := testContext(t)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "exists"); err != nil {
		t.Fatal(err)
	}
	proposals := logProposals(tb)

	const good = 40
	var topics []kmsg.CreateTopicsRequestTopic
	for i := range good {
		topics = append(topics, newTopic(fmt.Sprintf("good-%02d", i), 3, 1))
	}
	topics = append(topics,
		newTopic("exists", 1, 1),
		newTopic("bad-rf", 1, 5),
		newTopic("bad-config", 1, 1, "retention.ms", "soon"),
		newTopic("zero", 0, 1),
		newTopic("bad/name", 1, 1),
		newTopic("dup", 1, 1), newTopic("dup", 1, 1),
		newTopic("x.y", 1, 1), newTopic("x_y", 1, 1),
	)
	want := map[string][]int16{
		"exists":     {kerr.TopicAlreadyExists.Code},
		"bad-rf":     {kerr.InvalidReplicationFactor.Code},
		"bad-config": {kerr.InvalidConfig.Code},
		"zero":       {kerr.InvalidPartitions.Code},
		"bad/name":   {kerr.InvalidTopicException.Code},
		"dup":        {kerr.InvalidRequest.Code, kerr.InvalidRequest.Code},
		"x.y":        {0},
		"x_y":        {kerr.InvalidTopicException.Code}, // collides with x.y of the same request
	}
	check := func(what string, got map[string][]int16, want map[string][]int16) {
		t.Helper()
		for name, codes := range want {
			if fmt.Sprint(got[name]) != fmt.Sprint(codes) {
				t.Errorf("%s %s: error codes %v, want %v", what, name, got[name], codes)
			}
		}
		for i := range good {
			name := fmt.Sprintf("good-%02d", i)
			if fmt.Sprint(got[name]) != "[0]" {
				t.Errorf("%s %s: error codes %v", what, name, got[name])
			}
		}
	}

	// validate_only: every answer, nothing proposed, nothing created.
	validateWant := map[string][]int16{}
	for k, v := range want {
		validateWant[k] = v
	}
	validateWant["x_y"] = []int16{0} // x.y is not created, so nothing collides
	check("validate_only", createTopicsRaw(t, cl, true, topics...), validateWant)
	if recs := proposals.take(); len(recs) != 0 {
		t.Fatalf("validate_only proposed %d records", len(recs))
	}
	if tb.srv.topics.get("good-00") != nil {
		t.Fatal("validate_only created a topic")
	}

	check("create", createTopicsRaw(t, cl, false, topics...), want)
	oneBatch(t, "CreateTopics", proposals.take(), good+1)
	for i := range good {
		name := fmt.Sprintf("good-%02d", i)
		ts := tb.srv.topics.get(name)
		if ts == nil {
			t.Fatalf("%s not open when CreateTopics answered", name)
		}
		parts, _, _ := tb.srv.topics.snapshot(ts)
		if len(parts) != 3 || parts[2] == nil || !parts[2].IsLeader() {
			t.Fatalf("%s: partitions %v", name, parts)
		}
	}

	// CreatePartitions: the good topics grow in one batch; the others
	// answer on their own.
	var growNames []string
	for i := range good {
		growNames = append(growNames, fmt.Sprintf("good-%02d", i))
	}
	grown, err := adm.UpdatePartitions(ctx, 5, append(growNames, "missing", "exists")...)
	if err != nil {
		t.Fatal(err)
	}
	oneBatch(t, "CreatePartitions", proposals.take(), good+1) // + exists 1→5
	for _, name := range growNames {
		if r := grown[name]; r.Err != nil || tb.srv.topics.partition(name, 4) == nil {
			t.Errorf("grow %s: %v, partition 4 open: %v", name, r.Err, tb.srv.topics.partition(name, 4) != nil)
		}
	}
	expectErr(t, "grow missing", grown["missing"].Err, kerr.UnknownTopicOrPartition)
	shrink, err := adm.UpdatePartitions(ctx, 2, "good-00", "good-01")
	if err != nil {
		t.Fatal(err)
	}
	expectErr(t, "shrink", shrink["good-00"].Err, kerr.InvalidPartitions)
	if recs := proposals.take(); len(recs) != 0 {
		t.Errorf("a request with no valid topic proposed %d records", len(recs))
	}

	// DeleteTopics: one batch, the directories gone when it answers.
	deleted, err := adm.DeleteTopics(ctx, append(growNames, "missing", "x.y")...)
	if err != nil {
		t.Fatal(err)
	}
	oneBatch(t, "DeleteTopics", proposals.take(), good+1)
	expectErr(t, "delete missing", deleted["missing"].Err, kerr.UnknownTopicOrPartition)
	for _, name := range append(growNames, "x.y") {
		if r := deleted[name]; r.Err != nil || tb.srv.topics.get(name) != nil {
			t.Errorf("delete %s: %v, still open: %v", name, r.Err, tb.srv.topics.get(name) != nil)
		}
		if _, err := os.Stat(filepath.Join(tb.cfg.DataDir, name+"-0")); !os.IsNotExist(err) {
			t.Errorf("%s-0 directory still there: %v", name, err)
		}
	}
}

// TestCreateTopicsThousandPartitions: one CreateTopics of 200 topics with
// 5 partitions each is one proposal of one raft entry, and every
// partition is open when it answers. (10,000 partitions in one request,
// against the real binary: e2e's TestRestartManyPartitionsAfterKill.)
func TestCreateTopicsThousandPartitions(t *testing.T) {
	tb := startTestBroker(t)
	cl := tb.client(kgo.RequestTimeoutOverhead(3 * time.Minute))
	adm := kadm.NewClient(cl)
	adm.SetTimeoutMillis(int32((3 * time.Minute).Milliseconds()))
	proposals := logProposals(tb)
	names := make([]string, 200)
	for i := range names {
		names[i] = fmt.Sprintf("many-%04d", i)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	resp, err := adm.CreateTopics(ctx, 5, 1, nil, names...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("200 topics x 5 partitions in one request: %v", time.Since(start).Round(time.Millisecond))
	for _, name := range names {
		if r := resp[name]; r.Err != nil {
			t.Fatalf("%s: %v (%s)", name, r.Err, r.ErrMessage)
		}
	}
	oneBatch(t, "CreateTopics", proposals.take(), len(names))
	if n := len(tb.srv.topics.allPartitions()); n != 1000 {
		t.Fatalf("%d partitions open, want 1000", n)
	}
}
