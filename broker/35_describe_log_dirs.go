package broker

// DescribeLogDirs (key 35), v0-4:
//   - Every log dir of log.dirs (--data-dir), as an absolute path, with
//     the local size of each partition it holds and its offset lag (the
//     high watermark minus the log end, 0 on a leader); v4 adds the file
//     system's total and usable bytes (KIP-827).
//   - A partition being moved to another dir (AlterReplicaLogDirs) is
//     also listed in the destination with is_future true, the bytes
//     copied so far and its lag behind the current log's end.
//   - An offline dir is listed with KAFKA_STORAGE_ERROR and no partitions.
//   - Sizes are local bytes: for a tiered topic (remote.storage.enable)
//     the segments on this node's disk only, as Kafka reports them; the
//     protocol has no field for the object store's share. That is the
//     gauge strata_remote_log_size_bytes{topic,partition} (with
//     strata_remote_log_segments) on the admin HTTP /metrics of every
//     node holding a replica: the leader's is current, a follower's as of
//     its last manifest read (every remote.log.manager.task.interval.ms).
//     Kafka's counterpart is its BrokerTopicMetrics RemoteLogSizeBytes
//     (per topic); KAFKA-19368 proposes the field for DescribeLogDirs.
//   - Null topics describe every partition; named topics that do not exist
//     are left out, as in Kafka.
//   - A request with Strata's tagged field trafficTag gets each
//     partition's producer bytes in and consumer bytes out on this node
//     (partition_traffic.go), for the balancer.
//   - Needs DESCRIBE on the cluster: CLUSTER_AUTHORIZATION_FAILED at the
//     top from v3; before v3, which has no error field there, no results.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
)

func init() {
	registerAPI(kmsg.DescribeLogDirs, 0, 4, handleDescribeLogDirs)
	checksACLs(kmsg.DescribeLogDirs)
}

func handleDescribeLogDirs(rc *requestContext, req *kmsg.DescribeLogDirsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	if !rc.authorizeCluster(acl.OpDescribe) {
		if req.Version >= 3 {
			resp.ErrorCode = rc.countError(kerr.ClusterAuthorizationFailed.Code)
		}
		return resp
	}
	wanted := map[string]map[int32]bool{}
	for _, t := range req.Topics {
		if wanted[t.Topic] == nil {
			wanted[t.Topic] = map[int32]bool{}
		}
		for _, p := range t.Partitions {
			wanted[t.Topic][p] = true
		}
	}
	traffic := wantsTraffic(req)
	byDir := map[*logDir][]kmsg.DescribeLogDirsResponseDirTopic{}
	futures := map[*logDir][]kmsg.DescribeLogDirsResponseDirTopic{}
	for _, t := range rc.s.topics.all() {
		if req.Topics != nil && wanted[t.name] == nil {
			continue
		}
		parts, _, _ := rc.s.topics.snapshot(t)
		for _, p := range parts {
			if p == nil { // a replica this node does not host
				continue
			}
			if req.Topics != nil && !wanted[t.name][p.index] {
				continue
			}
			d := rc.s.logDirs.of(p.Log().Dir())
			if d == nil {
				continue
			}
			dp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			dp.Partition = p.index
			dp.Size = p.Log().Size()
			dp.OffsetLag = max(0, p.HighWatermark()-p.LogEndOffset())
			if traffic {
				setTraffic(&dp, p)
			}
			byDir[d] = addLogDirPartition(byDir[d], t.name, dp)
			if mv := rc.s.moves.get(p); mv != nil {
				fp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
				fp.Partition = p.index
				fp.IsFuture = true
				fp.Size, fp.OffsetLag = mv.progress(p)
				futures[mv.dest] = addLogDirPartition(futures[mv.dest], t.name, fp)
			}
		}
	}
	for _, d := range rc.s.logDirs.dirs {
		dir := kmsg.NewDescribeLogDirsResponseDir()
		dir.Dir = d.path // absolute, as Kafka reports it, whatever --data-dir said
		dir.TotalBytes, dir.UsableBytes = -1, -1
		if d.offline() {
			// Kafka lists an offline directory with the error and no
			// partitions.
			dir.ErrorCode = kerr.KafkaStorageError.Code
			resp.Dirs = append(resp.Dirs, dir)
			continue
		}
		dir.TotalBytes, dir.UsableBytes = usage(d.path)
		dir.Topics = byDir[d]
		for _, ft := range futures[d] {
			for _, fp := range ft.Partitions {
				dir.Topics = addLogDirPartition(dir.Topics, ft.Topic, fp)
			}
		}
		resp.Dirs = append(resp.Dirs, dir)
	}
	return resp
}

// addLogDirPartition adds dp under topic (the last entry when it is that
// topic's: callers add a topic's partitions together).
func addLogDirPartition(topics []kmsg.DescribeLogDirsResponseDirTopic, topic string, dp kmsg.DescribeLogDirsResponseDirTopicPartition) []kmsg.DescribeLogDirsResponseDirTopic {
	for i := range topics {
		if topics[i].Topic == topic {
			topics[i].Partitions = append(topics[i].Partitions, dp)
			return topics
		}
	}
	dt := kmsg.NewDescribeLogDirsResponseDirTopic()
	dt.Topic = topic
	dt.Partitions = append(dt.Partitions, dp)
	return append(topics, dt)
}
