package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// resetOffsetsJSON is POST /api/v1/groups/{group}/reset-offsets, as
// kafka-consumer-groups --reset-offsets: where to (earliest, latest, the
// first offset at or after timestamp, or offset clamped to the log), for
// which topics (absent: every topic the group has committed in) and
// partitions (only with one topic; absent: all), and whether to only
// show the new offsets (dryRun).
type resetOffsetsJSON struct {
	To         string   `json:"to"`
	Timestamp  *int64   `json:"timestamp"` // ms, with to=timestamp
	Offset     *int64   `json:"offset"`    // with to=offset
	Topics     []string `json:"topics"`
	Partitions []int32  `json:"partitions"`
	DryRun     bool     `json:"dryRun"`
}

type resetOffsetJSON struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	CurrentOffset int64  `json:"currentOffset"` // -1: none committed
	NewOffset     int64  `json:"newOffset"`
	Error         string `json:"error,omitempty"`
}

type resetOffsetsAnswerJSON struct {
	Group   string            `json:"group"`
	DryRun  bool              `json:"dryRun"`
	Applied bool              `json:"applied"` // committed, every partition without error
	Offsets []resetOffsetJSON `json:"offsets"`
}

// validate checks the request before the cluster is asked.
func (req *resetOffsetsJSON) validate() error {
	switch req.To {
	case "earliest", "latest":
	case "timestamp":
		if req.Timestamp == nil || *req.Timestamp < 0 {
			return fmt.Errorf("to=timestamp needs a timestamp (ms since the epoch, at least 0)")
		}
	case "offset":
		if req.Offset == nil || *req.Offset < 0 {
			return fmt.Errorf("to=offset needs an offset of at least 0")
		}
	default:
		return fmt.Errorf("to must be earliest, latest, timestamp or offset, not %q", req.To)
	}
	if req.To != "timestamp" && req.Timestamp != nil {
		return fmt.Errorf("timestamp is only for to=timestamp")
	}
	if req.To != "offset" && req.Offset != nil {
		return fmt.Errorf("offset is only for to=offset")
	}
	if len(req.Partitions) > 0 && len(req.Topics) != 1 {
		return fmt.Errorf("partitions need exactly one topic")
	}
	for _, p := range req.Partitions {
		if p < 0 {
			return fmt.Errorf("partition %d is negative", p)
		}
	}
	return nil
}

// resetOffsets: POST /api/v1/groups/{group}/reset-offsets. Like Kafka's
// tool it refuses (409) a group with members: only an inactive group's
// offsets can be moved. A dry run answers the new offsets and commits
// nothing; otherwise they are committed (OffsetCommit) and each
// partition's outcome is in the answer.
func (c *Console) resetOffsets(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	group := r.PathValue("group")
	var req resetOffsetsJSON
	if !decodeBody(w, r, &req) {
		return
	}
	if err := req.validate(); err != nil {
		writeError(w, http.StatusBadRequest, "", "%v", err)
		return
	}
	adm := kadm.NewClient(cl)
	described, err := adm.DescribeGroups(ctx, group)
	if err == nil {
		err = described.Error()
	}
	// A group that does not exist yet (Dead, or GROUP_ID_NOT_FOUND from
	// newer coordinators) can be given offsets, as Kafka's tool does.
	if errors.Is(err, kerr.GroupIDNotFound) {
		described, err = nil, nil
	}
	if err != nil {
		c.writeKafkaError(w, fmt.Sprintf("describing group %q", group), err)
		return
	}
	if d, ok := described[group]; ok && d.State != "Empty" && d.State != "Dead" {
		writeError(w, http.StatusConflict, kerr.NonEmptyGroup.Message,
			"offsets can only be reset while group %q is inactive, but it is %s with %d members; stop its consumers first", group, d.State, len(d.Members))
		return
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err == nil {
		err = committed.Error()
	}
	if errors.Is(err, kerr.GroupIDNotFound) {
		committed, err = nil, nil
	}
	if err != nil {
		c.writeKafkaError(w, fmt.Sprintf("fetching the offsets of group %q", group), err)
		return
	}
	targets, err := resetTargets(ctx, adm, req, committed)
	if err != nil {
		c.writeKafkaError(w, fmt.Sprintf("resetting the offsets of group %q", group), err)
		return
	}
	if len(targets) == 0 {
		writeError(w, http.StatusBadRequest, "", "group %q has no committed offsets; name the topics to reset", group)
		return
	}
	newOffsets, err := resetPositions(ctx, adm, req, targets)
	if err != nil {
		c.writeKafkaError(w, fmt.Sprintf("listing offsets for group %q", group), err)
		return
	}
	out := resetOffsetsAnswerJSON{Group: group, DryRun: req.DryRun, Offsets: []resetOffsetJSON{}}
	toCommit := kadm.Offsets{}
	for _, o := range newOffsets {
		if o.Error == "" {
			toCommit.Add(kadm.Offset{Topic: o.Topic, Partition: o.Partition, At: o.NewOffset, LeaderEpoch: -1})
		}
	}
	failed := len(toCommit) == 0
	var committedNow kadm.OffsetResponses
	if !req.DryRun && !failed {
		committedNow, err = adm.CommitOffsets(ctx, group, toCommit)
		if err != nil {
			c.writeKafkaError(w, fmt.Sprintf("committing the offsets of group %q", group), err)
			return
		}
	}
	for _, o := range newOffsets {
		if resp, ok := committedNow.Lookup(o.Topic, o.Partition); ok && resp.Err != nil {
			o.Error = resp.Err.Error()
		}
		failed = failed || o.Error != ""
		out.Offsets = append(out.Offsets, o)
	}
	out.Applied = !req.DryRun && !failed
	if out.Applied {
		c.history.forget(group) // the old lag says nothing about the new position
	}
	writeJSON(w, http.StatusOK, out)
}

// resetTargets lists the partitions to reset, each with its committed
// offset (-1: none), sorted; an unknown topic or partition is a Kafka
// error.
func resetTargets(ctx context.Context, adm *kadm.Client, req resetOffsetsJSON, committed kadm.OffsetResponses) ([]resetOffsetJSON, error) {
	topics := req.Topics
	if len(topics) == 0 {
		for t := range committed {
			topics = append(topics, t)
		}
	}
	var out []resetOffsetJSON
	for _, topic := range topics {
		td, err := describeTopic(ctx, adm, topic)
		if err != nil {
			return nil, err
		}
		partitions := req.Partitions
		if len(partitions) == 0 {
			partitions = td.Partitions.Numbers()
		}
		for _, p := range partitions {
			if _, ok := td.Partitions[p]; !ok {
				return nil, &kerr.Error{Message: kerr.InvalidPartitions.Message, Code: kerr.InvalidPartitions.Code,
					Description: fmt.Sprintf("topic %q has %d partitions, there is no partition %d", topic, len(td.Partitions), p)}
			}
			current := int64(-1)
			if o, ok := committed.Lookup(topic, p); ok && o.Err == nil {
				current = o.At
			}
			out = append(out, resetOffsetJSON{Topic: topic, Partition: p, CurrentOffset: current})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return slices.CompactFunc(out, func(a, b resetOffsetJSON) bool { return a.Topic == b.Topic && a.Partition == b.Partition }), nil
}

// resetPositions fills each target's new offset from ListOffsets: the log
// start, the high watermark, the first offset at or after the timestamp
// (the high watermark when there is none), or the offset clamped to
// [log start, high watermark] as Kafka's tool does.
func resetPositions(ctx context.Context, adm *kadm.Client, req resetOffsetsJSON, targets []resetOffsetJSON) ([]resetOffsetJSON, error) {
	var topics []string
	for _, t := range targets {
		if len(topics) == 0 || topics[len(topics)-1] != t.Topic {
			topics = append(topics, t.Topic)
		}
	}
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, err
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, err
	}
	var atTime kadm.ListedOffsets
	if req.To == "timestamp" {
		if atTime, err = adm.ListOffsetsAfterMilli(ctx, *req.Timestamp, topics...); err != nil {
			return nil, err
		}
	}
	for i := range targets {
		t := &targets[i]
		start, okStart := starts.Lookup(t.Topic, t.Partition)
		end, okEnd := ends.Lookup(t.Topic, t.Partition)
		switch {
		case !okStart || !okEnd:
			t.Error = "no offsets listed for the partition"
			continue
		case start.Err != nil:
			t.Error = start.Err.Error()
			continue
		case end.Err != nil:
			t.Error = end.Err.Error()
			continue
		}
		switch req.To {
		case "earliest":
			t.NewOffset = start.Offset
		case "latest":
			t.NewOffset = end.Offset
		case "offset":
			t.NewOffset = min(max(*req.Offset, start.Offset), end.Offset)
		case "timestamp":
			t.NewOffset = end.Offset
			if o, ok := atTime.Lookup(t.Topic, t.Partition); ok && o.Err == nil && o.Offset >= 0 {
				t.NewOffset = min(max(o.Offset, start.Offset), end.Offset)
			}
		}
	}
	return targets, nil
}
