package broker

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/storage"
)

// fetchReply is a Fetch response encoded by hand so that record bytes are
// never copied into user space: the encoding is a list of pieces, each some
// encoded bytes followed by an optional file chunk sent with sendfile.
// It embeds the kmsg response only for its version and flexibility; the
// fields below are what is encoded.
type fetchReply struct {
	*kmsg.FetchResponse
	pieces []fetchPiece
}

type fetchPiece struct {
	bytes []byte
	chunk storage.FileChunk
	owned bool // chunk.File belongs to this reply: closed once it is written
}

// release closes the files the reply owns; the connection calls it after
// writing (or failing to write) the reply.
func (r *fetchReply) release() {
	for _, p := range r.pieces {
		if p.owned {
			p.chunk.File.Close()
		}
	}
}

// size is the encoded body's length (the bytes a consumer quota counts).
func (r *fetchReply) size() int64 {
	var n int64
	for _, p := range r.pieces {
		n += int64(len(p.bytes)) + p.chunk.Len
	}
	return n
}

// setThrottle writes throttle_time_ms, the body's first field from v1.
func (r *fetchReply) setThrottle(ms int32) {
	if r.Version >= 1 && len(r.pieces) > 0 && len(r.pieces[0].bytes) >= 4 {
		binary.BigEndian.PutUint32(r.pieces[0].bytes, uint32(ms))
	}
}

// fetchPartitionOut is one partition's part of a response.
type fetchPartitionOut struct {
	partition      int32
	errorCode      int16
	highWatermark  int64
	lastStable     int64
	logStartOffset int64
	chunk          storage.FileChunk   // Len 0: no records
	remote         []storage.FileChunk // records in cached remote chunks (then chunk is empty); files owned by the reply
	// abortedTxns, for a read_committed fetch, lists the transactions
	// aborted in the returned range (v4+); nil encodes null, as for
	// read_uncommitted and for a partition that answers with an error.
	abortedTxns []storage.AbortedTxn
	// readReplica+1 is the preferred read replica the leader names
	// (KIP-392; 0: none, encoded -1).
	readReplicaPlus1 int32
	// currentLeader is KIP-951's hint for a NOT_LEADER_OR_FOLLOWER or
	// FENCED_LEADER_EPOCH answer (v12+, a tagged field); nil: none.
	currentLeader *leaderHint
	// drained: the read found nothing past the fetch offset, so only a
	// change of the partition brings it news (fetch sessions).
	drained bool
	// waitMark is fetchWatermark of the partition taken before the read:
	// a sessionless long poll waits only while the watermark still equals
	// it (one taken after the read would miss an append in between).
	waitMark int64
	// source is the partition read (nil when none was), whose consumer
	// bytes out are counted when the answer goes (partition_traffic.go).
	source *partition
}

// recordsLen is the size of the partition's records field.
func (p *fetchPartitionOut) recordsLen() int64 {
	n := p.chunk.Len
	for _, c := range p.remote {
		n += c.Len
	}
	return n
}

// closeRemote closes the remote chunk files of partitions read but not
// sent (a long poll that goes on waiting).
func closeRemote(topics []fetchTopicOut) {
	for _, t := range topics {
		for _, p := range t.partitions {
			for _, c := range p.remote {
				c.File.Close()
			}
		}
	}
}

type fetchTopicOut struct {
	name       string
	id         [16]byte
	partitions []fetchPartitionOut
}

// encodeFetchBody lays out a Fetch response body (after the response
// header) for version v, exactly as Kafka's schema orders the fields; a test
// checks it byte for byte against kmsg for every supported version.
// endpoints are the NodeEndpoints of the leaders the partitions' hints
// name (v16+, a tagged field).
func encodeFetchBody(version int16, errorCode int16, sessionID int32, topics []fetchTopicOut, endpoints []brokerAddr) []fetchPiece {
	flexible := version >= 12
	var pieces []fetchPiece
	buf := make([]byte, 0, 256)
	appendArrayLen := func(n int) {
		if flexible {
			buf = binary.AppendUvarint(buf, uint64(n)+1)
		} else {
			buf = binary.BigEndian.AppendUint32(buf, uint32(n))
		}
	}
	if version >= 1 {
		buf = binary.BigEndian.AppendUint32(buf, 0) // throttle_time_ms
	}
	if version >= 7 {
		buf = binary.BigEndian.AppendUint16(buf, uint16(errorCode))
		buf = binary.BigEndian.AppendUint32(buf, uint32(sessionID))
	}
	appendArrayLen(len(topics))
	for i := range topics {
		t := &topics[i]
		if version >= 13 {
			buf = append(buf, t.id[:]...)
		} else if flexible {
			buf = binary.AppendUvarint(buf, uint64(len(t.name))+1)
			buf = append(buf, t.name...)
		} else {
			buf = binary.BigEndian.AppendUint16(buf, uint16(len(t.name)))
			buf = append(buf, t.name...)
		}
		appendArrayLen(len(t.partitions))
		for j := range t.partitions {
			p := &t.partitions[j]
			buf = binary.BigEndian.AppendUint32(buf, uint32(p.partition))
			buf = binary.BigEndian.AppendUint16(buf, uint16(p.errorCode))
			buf = binary.BigEndian.AppendUint64(buf, uint64(p.highWatermark))
			if version >= 4 {
				buf = binary.BigEndian.AppendUint64(buf, uint64(p.lastStable))
			}
			if version >= 5 {
				buf = binary.BigEndian.AppendUint64(buf, uint64(p.logStartOffset))
			}
			if version >= 4 { // aborted_transactions: null, or producer id and first offset of each
				switch {
				case (p.abortedTxns == nil || p.errorCode != 0) && flexible:
					buf = append(buf, 0)
				case p.abortedTxns == nil || p.errorCode != 0:
					buf = binary.BigEndian.AppendUint32(buf, 0xffffffff)
				default:
					appendArrayLen(len(p.abortedTxns))
					for _, a := range p.abortedTxns {
						buf = binary.BigEndian.AppendUint64(buf, uint64(a.ProducerID))
						buf = binary.BigEndian.AppendUint64(buf, uint64(a.FirstOffset))
						if flexible {
							buf = append(buf, 0) // tagged fields
						}
					}
				}
			}
			if version >= 11 {
				buf = binary.BigEndian.AppendUint32(buf, uint32(p.readReplicaPlus1-1)) // preferred_read_replica, -1: none
			}
			// records: never null. A partition that answers with an error
			// carries an empty record set, as Kafka's does; librdkafka
			// refuses a whole response with a null one ("invalid
			// MessageSetSize -1") and never sees the partition's error.
			switch {
			case flexible:
				buf = binary.AppendUvarint(buf, uint64(p.recordsLen())+1)
			default:
				buf = binary.BigEndian.AppendUint32(buf, uint32(p.recordsLen()))
			}
			if p.chunk.Len > 0 {
				pieces = append(pieces, fetchPiece{bytes: buf, chunk: p.chunk})
				buf = make([]byte, 0, 64)
			}
			for _, c := range p.remote {
				pieces = append(pieces, fetchPiece{bytes: buf, chunk: c, owned: true})
				buf = make([]byte, 0, 64)
			}
			switch {
			case flexible && p.currentLeader != nil: // tag 1, CurrentLeader
				buf = append(buf, 1, 1, 9)
				buf = binary.BigEndian.AppendUint32(buf, uint32(p.currentLeader.id))
				buf = binary.BigEndian.AppendUint32(buf, uint32(p.currentLeader.epoch))
				buf = append(buf, 0)
			case flexible:
				buf = append(buf, 0) // partition tagged fields
			}
		}
		if flexible {
			buf = append(buf, 0) // topic tagged fields
		}
	}
	switch {
	case version >= 16 && len(endpoints) > 0: // tag 0, NodeEndpoints
		var nodes []byte
		nodes = binary.AppendUvarint(nodes, uint64(len(endpoints))+1)
		for _, e := range endpoints {
			nodes = binary.BigEndian.AppendUint32(nodes, uint32(e.id))
			nodes = binary.AppendUvarint(nodes, uint64(len(e.host))+1)
			nodes = append(nodes, e.host...)
			nodes = binary.BigEndian.AppendUint32(nodes, uint32(e.port))
			if e.rack == nil {
				nodes = append(nodes, 0)
			} else {
				nodes = binary.AppendUvarint(nodes, uint64(len(*e.rack))+1)
				nodes = append(nodes, *e.rack...)
			}
			nodes = append(nodes, 0) // node tagged fields
		}
		buf = append(buf, 1, 0)
		buf = binary.AppendUvarint(buf, uint64(len(nodes)))
		buf = append(buf, nodes...)
	case flexible:
		buf = append(buf, 0) // response tagged fields
	}
	return append(pieces, fetchPiece{bytes: buf})
}
