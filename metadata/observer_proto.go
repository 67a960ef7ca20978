package metadata

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// The observer protocol runs on a controller's raft listener
// (--controller-listen). A raft peer's connection is a stream of frames,
// each a 4-byte big-endian length in 1..maxRaftFrame and a raftpb.Message.
// An observer's connection instead opens with observerMagic, the four bytes
// "SOB1", which read as a length is 1397703217 > maxRaftFrame: no raft frame
// can start that way, and a controller that does not know the protocol
// closes the connection as a bad raft frame.
//
// After the magic both sides send frames of a 4-byte big-endian length n
// (1..maxRaftFrame), then n bytes: a type byte and its payload. Integers
// are big-endian.
//
// Observer → controller:
//
//	'H' hello:   version u8 (1), node id i32, flags u8 (1: send a snapshot),
//	             applied index u64, cluster id (rest; "" when none yet)
//	'P' propose: request id u64, timeout ms u32 (0: 30 s), cluster.EncodeRecord bytes
//
// Controller → observer:
//
//	'S' snapshot: index u64, leader i32, cluster.State.Encode bytes
//	'R' record:   index u64, leader i32, cluster.EncodeRecord bytes
//	'B' beat:     leader i32, controller applied index u64 (every 500 ms)
//	'A' answer:   request id u64, index u64, n u8, n × error code u16, error text (rest)
//	'E' error:    text; the controller closes the connection after it
//
// The controller streams, in index order, a snapshot when the observer's
// index is older than its ring of recent records (or the observer asks for
// one), then every record applied after the observer's position. Records
// rejected by the state machine and raft's empty entries are not sent, so
// the indices have gaps. An answer with no error codes is a success at
// index (its text is empty too); otherwise the codes name the sentinel
// errors (observerErrors) the error matched, so errors.Is works on the
// observer.
const observerMagic uint32 = 'S'<<24 | 'O'<<16 | 'B'<<8 | '1'

// observerVersion is the hello's protocol version.
const observerVersion = 1

// Frame types of the observer protocol.
const (
	obsHello    = 'H'
	obsPropose  = 'P'
	obsSnapshot = 'S'
	obsRecord   = 'R'
	obsBeat     = 'B'
	obsAnswer   = 'A'
	obsError    = 'E'
)

// observerHeartbeat is how often a controller sends a beat frame.
const observerHeartbeat = 500 * time.Millisecond

// helloWantSnapshot asks the controller for a snapshot whatever the index.
const helloWantSnapshot = 1

// observerErrors are the sentinel errors an answer can carry: code i+1 is
// observerErrors[i]. Append only: the codes are on the wire.
var observerErrors = []error{
	cluster.ErrRejected,
	cluster.ErrClusterInitialized,
	cluster.ErrBrokerNotRegistered,
	cluster.ErrStaleIncarnation,
	cluster.ErrTopicExists,
	cluster.ErrTopicIDExists,
	cluster.ErrTopicNotFound,
	cluster.ErrPartitionNotFound,
	cluster.ErrStalePartitionEpoch,
	cluster.ErrFencedLeaderEpoch,
	cluster.ErrIneligibleReplica,
	cluster.ErrInvalidReplicaSubset,
	cluster.ErrInvalidLeader,
	cluster.ErrInsufficientReplicas,
	cluster.ErrReplicaCountDiffering,
	cluster.ErrInvalidReplicaAssignment,
	cluster.ErrNoReassignmentInProgress,
	cluster.ErrMalformed,
	cluster.ErrInvalid,
	ErrNotLeader,
	ErrClosed,
	context.DeadlineExceeded,
	context.Canceled,
}

// errorCodes lists the codes of every sentinel err matches.
func errorCodes(err error) []uint16 {
	var codes []uint16
	for i, e := range observerErrors {
		if errors.Is(err, e) {
			codes = append(codes, uint16(i+1))
		}
	}
	return codes
}

// remoteError is an error a controller answered a proposal with: its text,
// and the sentinels it matched there.
type remoteError struct {
	msg   string
	kinds []error
}

func (e *remoteError) Error() string   { return e.msg }
func (e *remoteError) Unwrap() []error { return e.kinds }

func decodeRemoteError(codes []uint16, msg string) error {
	e := &remoteError{msg: msg}
	for _, c := range codes {
		if c >= 1 && int(c) <= len(observerErrors) {
			e.kinds = append(e.kinds, observerErrors[c-1])
		}
	}
	if e.msg == "" {
		e.msg = "metadata: proposal failed on the controller"
	}
	return e
}

// writeObsFrame writes one frame: its length, typ and the parts.
func writeObsFrame(w *bufio.Writer, typ byte, parts ...[]byte) error {
	n := 1
	for _, p := range parts {
		n += len(p)
	}
	if n > maxRaftFrame {
		return fmt.Errorf("metadata: observer frame of %d bytes exceeds the limit", n)
	}
	var hdr [5]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(n))
	hdr[4] = typ
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// errObsFrame marks a malformed observer frame.
var errObsFrame = errors.New("metadata: malformed observer frame")

// readObsFrame reads one frame.
func readObsFrame(r *bufio.Reader) (byte, []byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 || n > maxRaftFrame {
		return 0, nil, fmt.Errorf("%w: length %d", errObsFrame, n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return 0, nil, err
	}
	return buf[0], buf[1:], nil
}

// obsHelloMsg is the observer's opening request.
type obsHelloMsg struct {
	version   uint8
	nodeID    int32
	flags     uint8
	index     uint64
	clusterID string
}

func (h obsHelloMsg) encode() []byte {
	b := []byte{h.version}
	b = binary.BigEndian.AppendUint32(b, uint32(h.nodeID))
	b = append(b, h.flags)
	b = binary.BigEndian.AppendUint64(b, h.index)
	return append(b, h.clusterID...)
}

func decodeHello(p []byte) (obsHelloMsg, error) {
	if len(p) < 14 {
		return obsHelloMsg{}, fmt.Errorf("%w: hello of %d bytes", errObsFrame, len(p))
	}
	return obsHelloMsg{
		version:   p[0],
		nodeID:    int32(binary.BigEndian.Uint32(p[1:5])),
		flags:     p[5],
		index:     binary.BigEndian.Uint64(p[6:14]),
		clusterID: string(p[14:]),
	}, nil
}

// indexLeader encodes the index u64, leader i32 prefix of 'S' and 'R'.
func indexLeader(index uint64, leader int32) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 12), index)
	return binary.BigEndian.AppendUint32(b, uint32(leader))
}

func decodeIndexLeader(p []byte) (uint64, int32, []byte, error) {
	if len(p) < 12 {
		return 0, 0, nil, fmt.Errorf("%w: %d bytes", errObsFrame, len(p))
	}
	return binary.BigEndian.Uint64(p), int32(binary.BigEndian.Uint32(p[8:12])), p[12:], nil
}

// obsAnswerMsg is a controller's answer to one proposal.
type obsAnswerMsg struct {
	req   uint64
	index uint64
	codes []uint16
	msg   string
}

func (a obsAnswerMsg) encode() []byte {
	b := binary.BigEndian.AppendUint64(nil, a.req)
	b = binary.BigEndian.AppendUint64(b, a.index)
	codes := a.codes
	if len(codes) > 255 {
		codes = codes[:255]
	}
	b = append(b, byte(len(codes)))
	for _, c := range codes {
		b = binary.BigEndian.AppendUint16(b, c)
	}
	return append(b, a.msg...)
}

func decodeAnswer(p []byte) (obsAnswerMsg, error) {
	if len(p) < 17 {
		return obsAnswerMsg{}, fmt.Errorf("%w: answer of %d bytes", errObsFrame, len(p))
	}
	a := obsAnswerMsg{req: binary.BigEndian.Uint64(p), index: binary.BigEndian.Uint64(p[8:])}
	n := int(p[16])
	p = p[17:]
	if len(p) < 2*n {
		return obsAnswerMsg{}, fmt.Errorf("%w: answer codes", errObsFrame)
	}
	for i := 0; i < n; i++ {
		a.codes = append(a.codes, binary.BigEndian.Uint16(p[2*i:]))
	}
	a.msg = string(p[2*n:])
	return a, nil
}
