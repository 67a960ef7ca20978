package broker

import (
	"context"
	"encoding/hex"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/replica"
	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
	"github.com/strata-streaming/strata/tiering"
)

// recoverFromBucketConfig, as a CreateTopics config, asks the broker to
// recreate the topic from the manifests in the object store instead of
// creating an empty one (strata topic recover NAME --from-bucket). Its
// value is "true" for the newest incarnation of the name, or a topic ID (32
// hex digits, as in the bucket's keys) to choose one.
const recoverFromBucketConfig = "strata.recover.from.bucket"

// recoverFromBucket recreates a deleted or lost topic from the bucket: the
// topic ID, partition count and config overrides come from its manifests,
// and each partition's local log starts empty at the offset after its last
// remote segment, so every remote record is served again at its offset and
// producers continue after it.
func (m *topicManager) recoverFromBucket(ctx context.Context, name, which string, validateOnly bool) (*topicState, *topicError) {
	if err := validateTopicName(name); err != nil {
		return nil, newTopicError(kerr.InvalidTopicException, "%v", err)
	}
	if isInternalTopic(name) {
		return nil, newTopicError(kerr.InvalidRequest, "%s is an internal topic and is not recovered from the bucket", name)
	}
	found, err := tiering.FindTopicManifests(ctx, m.s.objects, name)
	if err != nil {
		return nil, newTopicError(kerr.KafkaStorageError, "listing the object store: %v", err)
	}
	byID := map[string][]tiering.TopicManifest{}
	for _, f := range found {
		byID[f.TopicID] = append(byID[f.TopicID], f)
	}
	id := strings.ToLower(which)
	if id == "true" {
		// The incarnation whose manifests were written last.
		ids := make([]string, 0, len(byID))
		for k := range byID {
			ids = append(ids, k)
		}
		sort.Slice(ids, func(i, j int) bool { return newest(byID[ids[i]]) > newest(byID[ids[j]]) })
		id = ""
		if len(ids) > 0 {
			id = ids[0]
		}
	}
	manifests := byID[id]
	if len(manifests) == 0 {
		return nil, newTopicError(kerr.UnknownTopicOrPartition, "the object store holds no manifest for topic %q (id %q)", name, which)
	}
	loaded := make([]*tiering.Manifest, 0, len(manifests))
	partitions := int32(0)
	var configs map[string]string
	var configsFrom int64
	for _, f := range manifests {
		mf, err := tiering.LoadManifest(ctx, m.s.objects, f.Key)
		if err != nil {
			return nil, newTopicError(kerr.KafkaStorageError, "reading %s: %v", f.Key, err)
		}
		loaded = append(loaded, mf)
		partitions = max(partitions, mf.Partitions, mf.Partition+1)
		if ms := f.ModTime.UnixNano(); configs == nil || ms > configsFrom {
			configs, configsFrom = mf.Configs, ms
		}
	}
	if configs == nil {
		configs = map[string]string{}
	}
	configs["remote.storage.enable"] = "true"
	if err := validateTopicConfigs(configs); err != nil {
		return nil, newTopicError(kerr.InvalidConfig, "configs stored in the bucket: %v", err)
	}
	var topicID metadata.TopicID
	if raw, err := hex.DecodeString(id); err != nil || len(raw) != len(topicID) {
		return nil, newTopicError(kerr.InvalidRequest, "topic id %q is not 32 hex digits", which)
	} else {
		copy(topicID[:], raw)
	}
	st := m.s.clusterState()
	if _, ok := st.Topic(name); ok {
		return nil, newTopicError(kerr.TopicAlreadyExists, "topic %q already exists; delete it before recovering it from the bucket", name)
	}
	if _, ok := st.TopicByID(cluster.TopicID(topicID)); ok {
		return nil, newTopicError(kerr.TopicAlreadyExists, "a topic with id %s already exists", id)
	}
	// A deletion applied but not yet carried out here: let this node
	// remove the old partitions before their directories are reused.
	gone := func() bool { return m.get(name) == nil && m.getByID(topicID) == nil }
	waitCtx, cancel := context.WithTimeout(ctx, proposeTimeout)
	err = m.s.meta.waitReconciled(waitCtx, gone)
	cancel()
	if err != nil {
		return nil, newTopicError(kerr.TopicAlreadyExists, "topic %q (id %s) is still being deleted on this node", name, id)
	}
	if validateOnly {
		return nil, nil
	}
	starts := map[int32]int64{}
	for _, mf := range loaded {
		starts[mf.Partition] = mf.NextOffset()
	}
	// The recovered partitions start on this node alone (their logs start
	// at the remote end here); reassign them to add replicas.
	placement := make([][]int32, partitions)
	for i := range placement {
		placement[i] = []int32{m.s.cfg.NodeID}
	}
	t, terr := m.commitCreate(name, topicID, placement, configs, starts)
	if terr == nil {
		parts, _, _ := m.snapshot(t)
		for _, p := range parts {
			if p == nil {
				continue
			}
			if _, err := p.remote.load(ctx); err != nil {
				m.s.logger.Warn("recovered partition's manifest not loaded; will retry", "topic", name, "partition", p.index, "err", err)
			}
		}
		m.s.logger.Info("topic recovered from the object store", "topic", name, "topic_id", id, "partitions", partitions)
	}
	return t, terr
}

func newest(ms []tiering.TopicManifest) int64 {
	var n int64
	for _, f := range ms {
		n = max(n, f.ModTime.UnixNano())
	}
	return n
}

// createPartitionAt prepares a new partition's directory with an empty log
// starting at startOffsets[index], if listed (recovery from the bucket).
func createPartitionAt(s *Server, t *topicState, index int32, startOffsets map[int32]int64) error {
	start, ok := startOffsets[index]
	if !ok || start == 0 {
		return nil
	}
	dir, err := s.logDirs.locate(partitionDirName(t.name, index))
	if err != nil {
		return err
	}
	return replica.CreateAt(dir, start,
		replica.Options{TopicID: t.id, Storage: t.config.storageConfig()})
}
