package broker

// Per-partition traffic for the self-balancer's network goals. Each node
// counts, for every partition it hosts, the record bytes producers
// appended to it (on the leader; duplicates not counted) and the record
// bytes it sent to consumers (replica fetches not counted: the planner
// charges replication to the leader from the bytes in). The counters are
// cumulative since the partition was opened here; the balancer turns them
// into rates by comparing two rounds.
//
// They travel in DescribeLogDirs (v2+, flexible): a request carrying the
// tagged field trafficTag (any value) gets, on every partition entry, the
// same tag with two unsigned varints, bytes in then bytes out. Other
// clients neither ask nor see it; Kafka brokers ignore the tag and answer
// without it.

import (
	"encoding/binary"
	"errors"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// trafficTag is the tagged-field key of the traffic counters, far above
// the keys Kafka assigns (from 0 up).
const trafficTag uint32 = 0x5354_0001

// partitionTraffic are one partition's cumulative counters on this node.
type partitionTraffic struct {
	bytesIn  atomic.Int64 // appended by producers
	bytesOut atomic.Int64 // sent to consumers
}

// trafficCounters is what a node reports for one partition.
type trafficCounters struct {
	BytesIn, BytesOut int64
}

// wantsTraffic reports whether a DescribeLogDirs request asks for the
// counters.
func wantsTraffic(req *kmsg.DescribeLogDirsRequest) bool {
	found := false
	req.UnknownTags.Each(func(key uint32, _ []byte) { found = found || key == trafficTag })
	return found
}

// askTraffic marks req as asking for the counters.
func askTraffic(req *kmsg.DescribeLogDirsRequest) { req.UnknownTags.Set(trafficTag, nil) }

// setTraffic adds p's counters to its DescribeLogDirs entry.
func setTraffic(dp *kmsg.DescribeLogDirsResponseDirTopicPartition, p *partition) {
	v := binary.AppendUvarint(nil, uint64(p.traffic.bytesIn.Load()))
	v = binary.AppendUvarint(v, uint64(p.traffic.bytesOut.Load()))
	dp.UnknownTags.Set(trafficTag, v)
}

// errNoTraffic: the entry has no (valid) counters.
var errNoTraffic = errors.New("broker: no traffic counters in the DescribeLogDirs entry")

// trafficOf reads the counters of a DescribeLogDirs entry.
func trafficOf(dp *kmsg.DescribeLogDirsResponseDirTopicPartition) (trafficCounters, error) {
	var out trafficCounters
	err := errNoTraffic
	dp.UnknownTags.Each(func(key uint32, v []byte) {
		if key != trafficTag {
			return
		}
		in, n := binary.Uvarint(v)
		if n <= 0 {
			return
		}
		outBytes, m := binary.Uvarint(v[n:])
		if m <= 0 || n+m != len(v) {
			return
		}
		out, err = trafficCounters{BytesIn: int64(in), BytesOut: int64(outBytes)}, nil
	})
	return out, err
}
