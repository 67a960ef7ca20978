package broker

// OffsetFetch (key 9), v0–v9.
//
//   - A group's committed offsets for the listed partitions (-1 where there
//     is none, and for every partition of a group that does not exist), or,
//     with a null topic list (v2+), all of them.
//   - v8+ fetches several groups at once. v9's member id and epoch belong
//     to KIP-848 groups; for classic groups they are not checked (Kafka
//     does the same).
//   - require_stable (v7+, KIP-447): a partition whose group has offsets
//     of an undecided transaction (TxnOffsetCommit before its marker) gets
//     UNSTABLE_OFFSET_COMMIT, which clients retry; without it the last
//     decided offset is returned.
//   - A group-level error (COORDINATOR_LOAD_IN_PROGRESS while the
//     coordinator loads) is per partition before v2, top-level v2–v7, per
//     group v8+.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/groups"
)

func init() {
	registerAPI(kmsg.OffsetFetch, 0, 9, handleOffsetFetch)
	checksACLs(kmsg.OffsetFetch)
}

// fetchedPartition is one partition's answer.
type fetchedPartition struct {
	partition   int32
	offset      int64
	leaderEpoch int32
	metadata    string
	err         *kerr.Error
}

type fetchedTopic struct {
	topic      string
	partitions []fetchedPartition
}

// requestedTopic is one topic of a request; all is set for a null list.
type requestedTopic struct {
	topic      string
	partitions []int32
}

func handleOffsetFetch(rc *requestContext, req *kmsg.OffsetFetchRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version >= 8 {
		for _, rg := range req.Groups {
			g := kmsg.NewOffsetFetchResponseGroup()
			g.Group = rg.Group
			var topics []requestedTopic
			if rg.Topics != nil {
				topics = []requestedTopic{}
				for _, t := range rg.Topics {
					topics = append(topics, requestedTopic{topic: t.Topic, partitions: t.Partitions})
				}
			}
			fetched, err := rc.fetchGroupOffsets(rg.Group, topics, req.RequireStable)
			if err != nil {
				g.ErrorCode = rc.countError(err.Code)
				resp.Groups = append(resp.Groups, g)
				continue
			}
			for _, ft := range fetched {
				t := kmsg.NewOffsetFetchResponseGroupTopic()
				t.Topic = ft.topic
				for _, fp := range ft.partitions {
					p := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					p.Partition, p.Offset, p.LeaderEpoch = fp.partition, fp.offset, fp.leaderEpoch
					p.Metadata = kmsg.StringPtr(fp.metadata)
					p.ErrorCode = rc.countError(code(fp.err))
					t.Partitions = append(t.Partitions, p)
				}
				g.Topics = append(g.Topics, t)
			}
			resp.Groups = append(resp.Groups, g)
		}
		return resp
	}

	var topics []requestedTopic
	if req.Topics != nil || req.Version < 2 {
		topics = []requestedTopic{}
		for _, t := range req.Topics {
			topics = append(topics, requestedTopic{topic: t.Topic, partitions: t.Partitions})
		}
	}
	fetched, err := rc.fetchGroupOffsets(req.Group, topics, req.Version >= 7 && req.RequireStable)
	if err != nil {
		if req.Version >= 2 {
			resp.ErrorCode = rc.countError(err.Code)
			return resp
		}
		fetched = unfetched(topics, err) // before v2 the error goes per partition
	}
	for _, ft := range fetched {
		t := kmsg.NewOffsetFetchResponseTopic()
		t.Topic = ft.topic
		for _, fp := range ft.partitions {
			p := kmsg.NewOffsetFetchResponseTopicPartition()
			p.Partition, p.Offset, p.LeaderEpoch = fp.partition, fp.offset, fp.leaderEpoch
			p.Metadata = kmsg.StringPtr(fp.metadata)
			p.ErrorCode = rc.countError(code(fp.err))
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// unfetched answers every requested partition with no offset and err.
func unfetched(topics []requestedTopic, err *kerr.Error) []fetchedTopic {
	var out []fetchedTopic
	for _, t := range topics {
		ft := fetchedTopic{topic: t.topic}
		for _, p := range t.partitions {
			ft.partitions = append(ft.partitions, fetchedPartition{partition: p, offset: -1, leaderEpoch: -1, err: err})
		}
		out = append(out, ft)
	}
	return out
}

// fetchGroupOffsets answers one group: the requested partitions, or every
// committed offset when topics is nil.
func (rc *requestContext) fetchGroupOffsets(group string, topics []requestedTopic, requireStable bool) ([]fetchedTopic, *kerr.Error) {
	var tps []groups.TopicPartition
	if topics != nil {
		tps = []groups.TopicPartition{}
		for _, t := range topics {
			for _, p := range t.partitions {
				tps = append(tps, groups.TopicPartition{Topic: t.topic, Partition: p})
			}
		}
	}
	// DESCRIBE on the group; a topic without DESCRIBE is left out of a
	// fetch of everything and answered TOPIC_AUTHORIZATION_FAILED when named.
	if !rc.authorize(acl.OpDescribe, acl.ResourceGroup, group) {
		return nil, kerr.GroupAuthorizationFailed
	}
	fetched, err := rc.s.groups.fetchOffsets(group, tps, requireStable)
	if err != nil {
		return nil, err
	}
	if topics == nil {
		var out []fetchedTopic
		for _, o := range fetched {
			if !rc.authorize(acl.OpDescribe, acl.ResourceTopic, o.Topic) {
				continue
			}
			if len(out) == 0 || out[len(out)-1].topic != o.Topic {
				out = append(out, fetchedTopic{topic: o.Topic})
			}
			ft := &out[len(out)-1]
			ft.partitions = append(ft.partitions, fetchedPartition{partition: o.Partition, offset: o.Offset, leaderEpoch: o.LeaderEpoch, metadata: o.Metadata, err: o.Err})
		}
		return out, nil
	}
	byTP := make(map[groups.TopicPartition]groups.FetchedOffset, len(fetched))
	for _, o := range fetched {
		byTP[o.TopicPartition] = o
	}
	out := unfetched(topics, nil)
	for i := range out {
		denied := !rc.authorize(acl.OpDescribe, acl.ResourceTopic, out[i].topic)
		for j := range out[i].partitions {
			fp := &out[i].partitions[j]
			if denied {
				fp.err = kerr.TopicAuthorizationFailed
				continue
			}
			if o, ok := byTP[groups.TopicPartition{Topic: out[i].topic, Partition: fp.partition}]; ok {
				fp.offset, fp.leaderEpoch, fp.metadata, fp.err = o.Offset, o.LeaderEpoch, o.Metadata, o.Err
			}
		}
	}
	return out, nil
}
