package metadata

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// No raft frame can start with the observer magic: read as a length it is
// over the raft frame limit, which the raft reader refuses.
func TestObserverMagicIsNoRaftFrame(t *testing.T) {
	if observerMagic <= maxRaftFrame {
		t.Fatalf("magic %d is a valid raft frame length (limit %d)", observerMagic, maxRaftFrame)
	}
}

func TestObserverErrorCodesRoundTrip(t *testing.T) {
	for _, sentinel := range []error{
		cluster.ErrTopicExists, cluster.ErrTopicNotFound, cluster.ErrStaleIncarnation,
		cluster.ErrBrokerNotRegistered, cluster.ErrInvalidReplicaAssignment, ErrNotLeader, context.DeadlineExceeded,
	} {
		orig := fmt.Errorf("metadata: wrapped: %w", sentinel)
		a := obsAnswerMsg{req: 7, index: 0, codes: errorCodes(orig), msg: orig.Error()}
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		if err := writeObsFrame(w, obsAnswer, a.encode()); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		typ, p, err := readObsFrame(bufio.NewReader(&buf))
		if err != nil || typ != obsAnswer {
			t.Fatal(typ, err)
		}
		back, err := decodeAnswer(p)
		if err != nil {
			t.Fatal(err)
		}
		got := decodeRemoteError(back.codes, back.msg)
		if !errors.Is(got, sentinel) || got.Error() != orig.Error() || back.req != 7 {
			t.Fatalf("%v came back as %v (codes %v)", orig, got, back.codes)
		}
		if errors.Is(sentinel, cluster.ErrRejected) != errors.Is(got, cluster.ErrRejected) {
			t.Fatalf("%v: ErrRejected not preserved", sentinel)
		}
	}
	// A rejection must not match a different rejection.
	got := decodeRemoteError(errorCodes(cluster.ErrTopicExists), "x")
	if errors.Is(got, cluster.ErrTopicNotFound) {
		t.Fatal("ErrTopicExists matches ErrTopicNotFound")
	}
}

func TestObserverFramesRejectBadInput(t *testing.T) {
	for _, in := range [][]byte{{0, 0, 0, 0}, {0xff, 0xff, 0xff, 0xff}, {0, 0, 0, 5, 'A'}} {
		if _, _, err := readObsFrame(bufio.NewReader(bytes.NewReader(in))); err == nil {
			t.Fatalf("%v: no error", in)
		}
	}
	if _, err := decodeHello([]byte{1, 2}); !errors.Is(err, errObsFrame) {
		t.Fatalf("short hello: %v", err)
	}
	if _, err := decodeAnswer(make([]byte, 16)); !errors.Is(err, errObsFrame) {
		t.Fatalf("short answer: %v", err)
	}
	if _, err := decodeAnswer(append(make([]byte, 16), 3, 0)); !errors.Is(err, errObsFrame) {
		t.Fatalf("answer with missing codes: %v", err)
	}
	h := obsHelloMsg{version: 1, nodeID: 42, flags: helloWantSnapshot, index: 1 << 40, clusterID: "abc"}
	back, err := decodeHello(h.encode())
	if err != nil || back != h {
		t.Fatalf("hello round trip: %+v %v", back, err)
	}
}
