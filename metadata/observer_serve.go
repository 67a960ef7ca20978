package metadata

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sort"
	"sync"
	"time"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// observerWriteTimeout bounds one write to an observer: a stuck observer
// is dropped rather than holding its stream forever.
const observerWriteTimeout = 10 * time.Second

// observerHub keeps what a controller serves observers: its applied state
// as its subscription last saw it and a ring of the recent applied records,
// encoded. Every record with an index in (floor, last] is in the ring.
type observerHub struct {
	size   int
	cancel func()

	mu      sync.Mutex
	floor   uint64
	last    uint64
	state   cluster.State
	ring    []hubEntry
	changed chan struct{} // closed and replaced on every change
}

type hubEntry struct {
	index uint64
	data  []byte
}

// startObserverHub subscribes a hub to the node's applied records.
func (n *Node) startObserverHub() *observerHub {
	h := &observerHub{size: n.cfg.ObserverRing, changed: make(chan struct{})}
	h.cancel = n.subscribe(h.apply, func(v *appliedView) {
		h.floor, h.last, h.state = v.index, v.index, v.state
	})
	return h
}

func (h *observerHub) apply(a Applied) {
	var data []byte
	if !a.Snapshot {
		var err error
		if data, err = cluster.EncodeRecord(a.Record); err != nil {
			// An applied record always encodes; if not, serve a snapshot.
			a.Snapshot = true
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if a.Index <= h.last {
		return // already in the view the hub started from
	}
	h.last, h.state = a.Index, a.After
	if a.Snapshot {
		h.floor, h.ring = a.Index, nil
	} else {
		h.ring = append(h.ring, hubEntry{index: a.Index, data: data})
		if len(h.ring) >= 2*h.size {
			drop := len(h.ring) - h.size
			h.floor = h.ring[drop-1].index
			h.ring = append([]hubEntry(nil), h.ring[drop:]...)
		}
	}
	close(h.changed)
	h.changed = make(chan struct{})
}

// obsConn is one observer connection on the controller side.
type obsConn struct {
	c   net.Conn
	wmu sync.Mutex
	w   *bufio.Writer
}

// send writes frames under the write lock and flushes.
func (oc *obsConn) send(frames func(w *bufio.Writer) error) error {
	oc.wmu.Lock()
	defer oc.wmu.Unlock()
	_ = oc.c.SetWriteDeadline(time.Now().Add(observerWriteTimeout))
	if err := frames(oc.w); err != nil {
		return err
	}
	return oc.w.Flush()
}

// serveObserver runs one observer connection whose magic the transport has
// read; it returns when the connection ends.
func (n *Node) serveObserver(c net.Conn, r *bufio.Reader) {
	h := n.hub
	oc := &obsConn{c: c, w: bufio.NewWriterSize(c, 64<<10)}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	typ, p, err := readObsFrame(r)
	if err != nil {
		return
	}
	var hello obsHelloMsg
	if typ != obsHello {
		err = fmt.Errorf("%w: expected hello, got %q", errObsFrame, typ)
	} else if hello, err = decodeHello(p); err == nil && hello.version != observerVersion {
		err = fmt.Errorf("metadata: observer protocol version %d; this controller speaks %d", hello.version, observerVersion)
	} else if id := n.State().ClusterID; err == nil && hello.clusterID != "" && id != "" && id != hello.clusterID {
		err = fmt.Errorf("metadata: observer of cluster %q connected to cluster %q", hello.clusterID, id)
	}
	if err != nil {
		n.cfg.Logger.Warn("metadata: observer refused", "remote", c.RemoteAddr(), "err", err)
		_ = oc.send(func(w *bufio.Writer) error { return writeObsFrame(w, obsError, []byte(err.Error())) })
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	n.cfg.Logger.Debug("metadata: observer connected", "observer", hello.nodeID, "index", hello.index, "remote", c.RemoteAddr())

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() {
		cancel()
		c.Close()
		wg.Wait()
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := n.streamToObserver(ctx, h, oc, hello)
		if ctx.Err() == nil {
			n.cfg.Logger.Debug("metadata: observer stream ended", "observer", hello.nodeID, "err", err)
		}
		cancel()
		c.Close() // ends the read loop below
	}()
	inflight := make(chan struct{}, 64)
	for {
		typ, p, err := readObsFrame(r)
		if err != nil {
			return
		}
		if typ != obsPropose || len(p) < 12 {
			n.cfg.Logger.Warn("metadata: bad frame from observer; closing", "observer", hello.nodeID, "type", typ)
			return
		}
		req := binary.BigEndian.Uint64(p)
		timeout := time.Duration(binary.BigEndian.Uint32(p[8:12])) * time.Millisecond
		data := p[12:]
		select {
		case inflight <- struct{}{}:
		case <-ctx.Done():
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-inflight }()
			n.answerObserver(ctx, oc, req, timeout, data)
		}()
	}
}

// answerObserver proposes one record for an observer and answers.
func (n *Node) answerObserver(ctx context.Context, oc *obsConn, req uint64, timeout time.Duration, data []byte) {
	if timeout <= 0 || timeout > 5*time.Minute {
		timeout = 30 * time.Second
	}
	ans := obsAnswerMsg{req: req}
	rec, err := cluster.DecodeRecord(data)
	if err == nil {
		pctx, cancel := context.WithTimeout(ctx, timeout)
		var a Applied
		a, err = n.Propose(pctx, rec)
		cancel()
		ans.index = a.Index
	}
	if err != nil {
		ans.codes, ans.msg = errorCodes(err), err.Error()
		if ans.msg == "" {
			ans.msg = "metadata: proposal failed"
		}
	}
	_ = oc.send(func(w *bufio.Writer) error { return writeObsFrame(w, obsAnswer, ans.encode()) })
}

// streamToObserver sends the observer a snapshot if it needs one, then
// every record applied after its position, and a beat every
// observerHeartbeat, until ctx ends or a write fails.
func (n *Node) streamToObserver(ctx context.Context, h *observerHub, oc *obsConn, hello obsHelloMsg) error {
	pos := hello.index
	seen := n.obs.track(hello.nodeID)
	defer n.obs.untrack(hello.nodeID, seen)
	seen.pos.Store(pos)
	seen.at.Store(n.cfg.Clock.Now().UnixMilli())
	wantSnap := hello.flags&helloWantSnapshot != 0
	beat := time.NewTicker(observerHeartbeat)
	defer beat.Stop()
	for {
		h.mu.Lock()
		wake := h.changed
		var (
			snap      *cluster.State
			snapIndex uint64
			batch     []hubEntry
		)
		if wantSnap || pos < h.floor {
			st := h.state
			snap, snapIndex = &st, h.last
		} else {
			i := sort.Search(len(h.ring), func(i int) bool { return h.ring[i].index > pos })
			batch = append([]hubEntry(nil), h.ring[i:]...)
		}
		h.mu.Unlock()
		if snap != nil || len(batch) > 0 {
			leader := n.LeaderID()
			var data []byte
			if snap != nil {
				var err error
				if data, err = snap.Encode(); err != nil {
					return err
				}
			}
			err := oc.send(func(w *bufio.Writer) error {
				if snap != nil {
					if err := writeObsFrame(w, obsSnapshot, indexLeader(snapIndex, leader), data); err != nil {
						return err
					}
				}
				for _, e := range batch {
					if err := writeObsFrame(w, obsRecord, indexLeader(e.index, leader), e.data); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			if snap != nil {
				pos, wantSnap = snapIndex, false
			}
			if len(batch) > 0 {
				pos = batch[len(batch)-1].index
			}
			seen.pos.Store(pos)
			seen.at.Store(n.cfg.Clock.Now().UnixMilli())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
		case <-beat.C:
			h.mu.Lock()
			last := h.last
			h.mu.Unlock()
			b := binary.BigEndian.AppendUint32(nil, uint32(n.LeaderID()))
			b = binary.BigEndian.AppendUint64(b, last)
			if err := oc.send(func(w *bufio.Writer) error { return writeObsFrame(w, obsBeat, b) }); err != nil {
				return err
			}
		}
	}
}
