package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

type topicSummaryJSON struct {
	Name              string `json:"name"`
	Partitions        int    `json:"partitions"`
	ReplicationFactor int    `json:"replicationFactor"`
	Internal          bool   `json:"internal"`
}

type topicPageJSON struct {
	Topics   []topicSummaryJSON `json:"topics"`
	Total    int                `json:"total"` // topics matching the search
	Page     int                `json:"page"`  // from 1
	PageSize int                `json:"pageSize"`
}

const (
	defaultPageSize = 50
	maxPageSize     = 500
)

// intParam parses the query parameter name, def when absent; ok is false
// (and the 400 written) when it is not an integer in [lo, hi].
func intParam(w http.ResponseWriter, r *http.Request, name string, def, lo, hi int64) (int64, bool) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, true
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < lo || v > hi {
		writeError(w, http.StatusBadRequest, "", "%s must be an integer from %d to %d, not %q", name, lo, hi, s)
		return 0, false
	}
	return v, true
}

// listTopics: GET /api/v1/topics?search=&page=&pageSize=, sorted by name,
// from the shared metadata snapshot (snapshot.go): a search scans the
// sorted names, a page is a slice of them, and only the page's topics are
// turned into JSON, so the answer costs the same on 10,000 partitions as
// on ten.
func (c *Console) listTopics(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	page, size, ok := pageParams(w, r)
	if !ok {
		return
	}
	search := strings.ToLower(r.URL.Query().Get("search"))
	snap, err := c.snapshots.get(ctx, cl)
	if err != nil {
		c.writeKafkaError(w, "listing topics", err)
		return
	}
	matching := snap.matching(search)
	out := topicPageJSON{Topics: []topicSummaryJSON{}, Total: len(matching), Page: page, PageSize: size}
	from, to := pageBounds(len(matching), page, size)
	for _, te := range matching[from:to] {
		out.Topics = append(out.Topics, topicSummaryJSON{
			Name:              te.name,
			Partitions:        len(te.parts),
			ReplicationFactor: te.replicationFactor(),
			Internal:          te.internal,
		})
	}
	writeJSON(w, http.StatusOK, out)
}

type createTopicJSON struct {
	Name              string            `json:"name"`
	Partitions        *int32            `json:"partitions"`        // absent: the broker's num.partitions
	ReplicationFactor *int16            `json:"replicationFactor"` // absent: default.replication.factor
	Configs           map[string]string `json:"configs"`
}

// validTopicName applies Kafka's rules for topic names.
func validTopicName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("a topic name is required")
	case name == "." || name == "..":
		return fmt.Errorf("topic name %q is not allowed", name)
	case len(name) > 249:
		return fmt.Errorf("topic name is %d characters long, at most 249 are allowed", len(name))
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("topic name %q has %q; only ASCII letters, digits, '.', '_' and '-' are allowed", name, r)
		}
	}
	return nil
}

// createTopic: POST /api/v1/topics, 201 with what the cluster created.
func (c *Console) createTopic(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	var req createTopicJSON
	if !decodeBody(w, r, &req) {
		return
	}
	if err := validTopicName(req.Name); err != nil {
		writeError(w, http.StatusBadRequest, kerr.InvalidTopicException.Message, "%v", err)
		return
	}
	partitions, replication := int32(-1), int16(-1)
	if req.Partitions != nil {
		if partitions = *req.Partitions; partitions < 1 {
			writeError(w, http.StatusBadRequest, kerr.InvalidPartitions.Message, "partitions must be at least 1, not %d", partitions)
			return
		}
	}
	if req.ReplicationFactor != nil {
		if replication = *req.ReplicationFactor; replication < 1 {
			writeError(w, http.StatusBadRequest, kerr.InvalidReplicationFactor.Message, "replicationFactor must be at least 1, not %d", replication)
			return
		}
	}
	configs := make(map[string]*string, len(req.Configs))
	for k, v := range req.Configs {
		configs[k] = &v
	}
	adm := kadm.NewClient(cl)
	resp, err := adm.CreateTopic(ctx, partitions, replication, configs, req.Name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		c.writeKafkaError(w, fmt.Sprintf("creating topic %q", req.Name), withMessage(err, resp.ErrMessage))
		return
	}
	writeJSON(w, http.StatusCreated, topicSummaryJSON{Name: resp.Topic, Partitions: int(resp.NumPartitions), ReplicationFactor: int(resp.ReplicationFactor)})
}

// withMessage keeps a Kafka error's code and puts the broker's message,
// when it sent one, in its description.
func withMessage(err error, msg string) error {
	ke, ok := err.(*kerr.Error)
	if !ok || msg == "" {
		return err
	}
	return &kerr.Error{Message: ke.Message, Code: ke.Code, Retriable: ke.Retriable, Description: msg}
}

// deleteTopic: DELETE /api/v1/topics/{topic}, 204.
func (c *Console) deleteTopic(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	topic := r.PathValue("topic")
	adm := kadm.NewClient(cl)
	resp, err := adm.DeleteTopic(ctx, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		c.writeKafkaError(w, fmt.Sprintf("deleting topic %q", topic), withMessage(err, resp.ErrMessage))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type partitionJSON struct {
	Partition       int32   `json:"partition"`
	Leader          int32   `json:"leader"`
	LeaderEpoch     int32   `json:"leaderEpoch"`
	Replicas        []int32 `json:"replicas"`
	ISR             []int32 `json:"isr"`
	OfflineReplicas []int32 `json:"offlineReplicas"`
	LogStartOffset  int64   `json:"logStartOffset"` // -1: unknown (no leader)
	HighWatermark   int64   `json:"highWatermark"`
	// LocalBytes is the leader's local log size (DescribeLogDirs); -1:
	// unknown.
	LocalBytes int64 `json:"localBytes"`
	// RemoteBytes is the size of a tiered partition's segments in the
	// bucket as this node knows it (strata_remote_log_size_bytes); -1:
	// unknown or not tiered.
	RemoteBytes int64 `json:"remoteBytes"`
	// RemoteEndOffset is the offset after the last record in the bucket
	// and UploadLag the records below the high watermark not there yet
	// (the active segment's among them: only sealed segments go); -1:
	// unknown or not tiered.
	RemoteEndOffset int64  `json:"remoteEndOffset"`
	UploadLag       int64  `json:"uploadLag"`
	Error           string `json:"error,omitempty"`
}

type configJSON struct {
	Name      string  `json:"name"`
	Value     *string `json:"value"` // null: sensitive or unset
	Source    string  `json:"source"`
	Sensitive bool    `json:"sensitive"`
}

type topicJSON struct {
	Name       string          `json:"name"`
	ID         string          `json:"id"`
	Internal   bool            `json:"internal"`
	Partitions []partitionJSON `json:"partitions"`
	Configs    []configJSON    `json:"configs"`
}

// getTopic: GET /api/v1/topics/{topic}.
func (c *Console) getTopic(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	topic := r.PathValue("topic")
	adm := kadm.NewClient(cl)
	td, err := describeTopic(ctx, adm, topic)
	if err != nil {
		c.writeKafkaError(w, fmt.Sprintf("describing topic %q", topic), err)
		return
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		c.writeKafkaError(w, fmt.Sprintf("listing the start offsets of %q", topic), err)
		return
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		c.writeKafkaError(w, fmt.Sprintf("listing the end offsets of %q", topic), err)
		return
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err == nil && len(rcs) > 0 {
		err = rcs[0].Err
	}
	if err != nil {
		c.writeKafkaError(w, fmt.Sprintf("describing the configs of %q", topic), err)
		return
	}
	// Sizes are extra: a node that cannot describe its log dirs leaves
	// them unknown rather than failing the page.
	set := kadm.TopicsSet{}
	set.Add(topic, td.Partitions.Numbers()...)
	dirs, err := adm.DescribeAllLogDirs(ctx, set)
	if err != nil {
		c.cfg.Logger.Debug("console: describing log dirs", "topic", topic, "err", err)
	}
	out := topicJSON{Name: td.Topic, ID: td.ID.String(), Internal: td.IsInternal, Partitions: []partitionJSON{}, Configs: []configJSON{}}
	for _, p := range td.Partitions.Sorted() {
		pj := partitionJSON{
			Partition: p.Partition, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch,
			Replicas: nonNil(p.Replicas), ISR: nonNil(p.ISR), OfflineReplicas: nonNil(p.OfflineReplicas),
			LogStartOffset: -1, HighWatermark: -1, LocalBytes: -1, RemoteBytes: -1, RemoteEndOffset: -1, UploadLag: -1,
		}
		if d, ok := dirs[p.Leader].LookupPartition(topic, p.Partition); ok {
			pj.LocalBytes = d.Size
		}
		remote, remoteKnown := RemoteLogState{}, false
		if c.cfg.RemoteLog != nil {
			remote, remoteKnown = c.cfg.RemoteLog(topic, p.Partition)
		}
		if remoteKnown {
			pj.RemoteBytes, pj.RemoteEndOffset = remote.Bytes, remote.NextOffset
		}
		if p.Err != nil {
			pj.Error = p.Err.Error()
		}
		if o, ok := starts.Lookup(topic, p.Partition); ok && o.Err == nil {
			pj.LogStartOffset = o.Offset
		}
		if o, ok := ends.Lookup(topic, p.Partition); ok && o.Err == nil {
			pj.HighWatermark = o.Offset
		}
		if remoteKnown && pj.HighWatermark >= 0 {
			pj.UploadLag = max(0, pj.HighWatermark-max(remote.NextOffset, pj.LogStartOffset))
		}
		out.Partitions = append(out.Partitions, pj)
	}
	for _, rc := range rcs {
		for _, cfg := range rc.Configs {
			out.Configs = append(out.Configs, configJSON{Name: cfg.Key, Value: cfg.Value, Source: cfg.Source.String(), Sensitive: cfg.Sensitive})
		}
	}
	sort.Slice(out.Configs, func(i, j int) bool { return out.Configs[i].Name < out.Configs[j].Name })
	writeJSON(w, http.StatusOK, out)
}

// describeTopic is the topic's metadata, or its error
// (UNKNOWN_TOPIC_OR_PARTITION when there is no such topic).
func describeTopic(ctx context.Context, adm *kadm.Client, topic string) (kadm.TopicDetail, error) {
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return kadm.TopicDetail{}, err
	}
	td, ok := md.Topics[topic]
	if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
		return td, &kerr.Error{Message: kerr.UnknownTopicOrPartition.Message, Code: kerr.UnknownTopicOrPartition.Code,
			Description: fmt.Sprintf("topic %q not found", topic)}
	}
	return td, td.Err
}

func nonNil(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}
