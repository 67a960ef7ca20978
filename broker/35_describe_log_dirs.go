package broker

// DescribeLogDirs (key 35), v0-4:
//   - One log dir, the node's data directory (--data-dir), with the local
//     size of each partition it holds, its offset lag (the high watermark
//     minus the log end, 0 on a leader) and is_future false (no partition
//     is ever being moved between directories here); v4 adds the file
//     system's total and usable bytes (KIP-827).
//   - Tiered topics: size is what is on local disk; the object store's
//     share is not in the response.
//   - Null topics describe every partition; named topics that do not exist
//     are left out, as in Kafka.
//   - Needs DESCRIBE on the cluster: CLUSTER_AUTHORIZATION_FAILED at the
//     top from v3; before v3, which has no error field there, no results.

import (
	"path/filepath"
	"syscall"

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
	dir := kmsg.NewDescribeLogDirsResponseDir()
	dir.Dir = rc.s.cfg.DataDir
	if abs, err := filepath.Abs(dir.Dir); err == nil {
		dir.Dir = abs // as Kafka reports it, whatever --data-dir said
	}
	dir.TotalBytes, dir.UsableBytes = -1, -1
	var fs syscall.Statfs_t
	if err := syscall.Statfs(rc.s.cfg.DataDir, &fs); err == nil {
		dir.TotalBytes = int64(fs.Blocks) * int64(fs.Bsize)
		dir.UsableBytes = int64(fs.Bavail) * int64(fs.Bsize)
	}
	for _, t := range rc.s.topics.all() {
		if req.Topics != nil && wanted[t.name] == nil {
			continue
		}
		parts, _, _ := rc.s.topics.snapshot(t)
		dt := kmsg.NewDescribeLogDirsResponseDirTopic()
		dt.Topic = t.name
		for _, p := range parts {
			if req.Topics != nil && !wanted[t.name][p.index] {
				continue
			}
			dp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			dp.Partition = p.index
			dp.Size = p.Log().Size()
			dp.OffsetLag = max(0, p.HighWatermark()-p.LogEndOffset())
			dt.Partitions = append(dt.Partitions, dp)
		}
		if len(dt.Partitions) > 0 {
			dir.Topics = append(dir.Topics, dt)
		}
	}
	resp.Dirs = append(resp.Dirs, dir)
	return resp
}
