package metadata

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// Member is a node's view of the cluster metadata log, whether it is a
// controller (a raft voter, *Node) or a broker-only node following the
// controllers (*Observer): the applied state, waiting for and subscribing
// to applied records, and proposing records.
type Member interface {
	// ID is this node's id.
	ID() int32
	// State is the latest applied state (immutable).
	State() cluster.State
	// AppliedIndex is the log index of the latest applied state.
	AppliedIndex() uint64
	// WaitApplied waits until the entry at index is applied locally.
	WaitApplied(ctx context.Context, index uint64) error
	// Subscribe delivers applied records in log order (a snapshot as
	// Applied{Snapshot: true}) until cancel or Close.
	Subscribe(fn func(Applied)) (cancel func())
	// Propose commits rec and returns once it is applied locally.
	Propose(ctx context.Context, rec cluster.Record) (Applied, error)
	// LeaderID is the raft leader's node id, -1 when unknown.
	LeaderID() int32
	// Close stops the member.
	Close() error
}

var (
	_ Member = (*Node)(nil)
	_ Member = (*Observer)(nil)
)

// Errors of Observer.
var (
	// ErrNoController: no controller connection before the context ended.
	ErrNoController = errors.New("metadata: no controller connection")
	// ErrControllerLost: the connection carrying a proposal broke before
	// its answer; the record may or may not have been committed.
	ErrControllerLost = errors.New("metadata: controller connection lost; proposal outcome unknown")
)

// ObserverConfig configures an Observer. Zero values take the defaults named.
type ObserverConfig struct {
	// NodeID is this node's id (--node-id).
	NodeID int32
	// Controllers are the controllers' raft addresses (--controllers); the
	// observer connects to one at a time, trying them in turn. Once the
	// log it applied records the quorum's membership, it tries those
	// members at their recorded addresses instead (controllerTargets).
	Controllers []Voter
	// DialTimeout bounds one connection attempt (2 s).
	DialTimeout time.Duration
	// IdleTimeout drops a controller that sent nothing for this long (5 s;
	// controllers send a beat every 500 ms), or that has known no raft
	// leader for this long (cut off from the quorum, it falls behind).
	IdleTimeout time.Duration
	// MaxBackoff caps the wait between rounds of failed attempts (1 s).
	MaxBackoff time.Duration
	// Logger receives connection events (default: discard).
	Logger *slog.Logger
	// TLS, if set, is how the controllers' raft port is dialed (its Client
	// side).
	TLS *TLS
}

func (c *ObserverConfig) setDefaults() {
	if c.DialTimeout <= 0 {
		c.DialTimeout = 2 * time.Second
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 5 * time.Second
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Validate checks the configuration.
func (c *ObserverConfig) Validate() error {
	if c.NodeID < 0 {
		return fmt.Errorf("metadata: node id %d", c.NodeID)
	}
	if len(c.Controllers) == 0 {
		return errors.New("metadata: an observer needs the controllers (--controllers)")
	}
	for _, v := range c.Controllers {
		if v.ID == c.NodeID {
			return fmt.Errorf("metadata: observer node %d is listed among the controllers", c.NodeID)
		}
	}
	return nil
}

// recentLimit bounds the applied records an observer keeps while it has
// proposals in flight, to hand each its Applied.
const recentLimit = 1024

// Observer is a broker-only node's member of the metadata log (Kafka's
// process.roles=broker): not a raft voter, it follows the records the
// controllers have applied over the observer protocol (see observerMagic)
// and applies them into its own State, and proposes through the
// controller it is connected to. It keeps nothing on disk: it starts from
// a snapshot (or the log's start) on every start.
type Observer struct {
	cfg    ObserverConfig
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	view       atomic.Pointer[appliedView]
	leader     atomic.Int32
	controller atomic.Int32
	nextReq    atomic.Uint64
	snapshots  atomic.Uint64

	// Loop-owned.
	state  cluster.State
	index  uint64
	resync bool

	mu struct {
		sync.Mutex
		closed    bool
		appliedCh chan struct{} // closed and replaced on each apply
		subs      map[*subscriber]struct{}
		conn      net.Conn
		sess      *observerSession
		sessCh    chan struct{} // closed and replaced when sess changes
		inflight  int
		recent    []Applied // while inflight > 0
	}
}

// observerSession is one live connection to a controller.
type observerSession struct {
	conn net.Conn
	done chan struct{}

	wmu sync.Mutex
	w   *bufio.Writer

	mu      sync.Mutex
	pending map[uint64]chan obsAnswerMsg
}

// StartObserver starts following the controllers; it returns at once and
// connects in the background (State is empty until the first records).
func StartObserver(cfg ObserverConfig) (*Observer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	o := &Observer{cfg: cfg}
	o.ctx, o.cancel = context.WithCancel(context.Background())
	o.leader.Store(-1)
	o.controller.Store(-1)
	o.mu.appliedCh = make(chan struct{})
	o.mu.subs = map[*subscriber]struct{}{}
	o.mu.sessCh = make(chan struct{})
	o.view.Store(&appliedView{})
	o.wg.Add(1)
	go o.run()
	return o, nil
}

// ID is this node's id.
func (o *Observer) ID() int32 { return o.cfg.NodeID }

// LeaderID is the raft leader's node id as last reported by a controller,
// -1 when unknown.
func (o *Observer) LeaderID() int32 { return o.leader.Load() }

// Controller is the id of the controller the observer is connected to, -1
// while it is not connected.
func (o *Observer) Controller() int32 { return o.controller.Load() }

// SnapshotsInstalled counts the snapshots received from controllers.
func (o *Observer) SnapshotsInstalled() uint64 { return o.snapshots.Load() }

// State returns the latest applied state. It is immutable and cheap.
func (o *Observer) State() cluster.State { return o.view.Load().state }

// AppliedIndex returns the log index of the latest applied record.
func (o *Observer) AppliedIndex() uint64 { return o.view.Load().index }

// WaitApplied waits until the record at index (or a later one) is applied.
func (o *Observer) WaitApplied(ctx context.Context, index uint64) error {
	for {
		o.mu.Lock()
		ch, closed := o.mu.appliedCh, o.mu.closed
		o.mu.Unlock()
		if o.view.Load().index >= index {
			return nil
		}
		if closed {
			return ErrClosed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("metadata: waiting for index %d: %w", index, ctx.Err())
		}
	}
}

// Subscribe calls fn for every record applied from now on, in log order,
// on a goroutine of its own; a snapshot from a controller arrives as
// Applied{Snapshot: true} (resynchronise from After). The returned
// function stops the subscription; Close stops all.
func (o *Observer) Subscribe(fn func(Applied)) (cancel func()) {
	s := &subscriber{fn: fn, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	o.mu.Lock()
	if o.mu.closed {
		o.mu.Unlock()
		return func() {}
	}
	o.mu.subs[s] = struct{}{}
	o.mu.Unlock()
	o.wg.Add(1)
	go s.run(&o.wg)
	var once sync.Once
	return func() {
		once.Do(func() {
			o.mu.Lock()
			_, live := o.mu.subs[s]
			delete(o.mu.subs, s)
			o.mu.Unlock()
			if live {
				close(s.stop)
			}
		})
	}
}

// Propose sends rec to the connected controller, which commits it through
// the quorum, and returns once this observer has applied it (State shows
// it). While not connected it waits for a connection until ctx ends
// (ErrNoController). A rejection comes back with errors.Is working for the
// cluster sentinels (cluster.ErrRejected, cluster.ErrTopicExists, …).
// If ctx ends or the connection breaks (ErrControllerLost) after the
// record was sent, the outcome is unknown: it may still commit.
func (o *Observer) Propose(ctx context.Context, rec cluster.Record) (Applied, error) {
	body, err := cluster.EncodeRecord(rec)
	if err != nil {
		return Applied{}, err
	}
	if err := rec.Validate(); err != nil {
		return Applied{}, err
	}
	o.mu.Lock()
	o.mu.inflight++
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		if o.mu.inflight--; o.mu.inflight == 0 {
			o.mu.recent = nil
		}
		o.mu.Unlock()
	}()

	var sess *observerSession
	for {
		o.mu.Lock()
		var (
			wait   chan struct{}
			closed bool
		)
		sess, wait, closed = o.mu.sess, o.mu.sessCh, o.mu.closed
		o.mu.Unlock()
		if closed {
			return Applied{}, ErrClosed
		}
		if sess != nil {
			break
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return Applied{}, fmt.Errorf("%w: %w", ErrNoController, ctx.Err())
		}
	}
	ans, err := o.request(ctx, sess, body)
	if err != nil {
		return Applied{}, err
	}
	if len(ans.codes) > 0 || ans.msg != "" {
		return Applied{}, decodeRemoteError(ans.codes, ans.msg)
	}
	if err := o.WaitApplied(ctx, ans.index); err != nil {
		return Applied{}, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, a := range o.mu.recent {
		if a.Index == ans.index {
			return a, nil
		}
	}
	// A snapshot overtook the record (a reconnect far behind): it is
	// committed and in State, but its Before state is gone.
	return Applied{}, fmt.Errorf("metadata: record committed at index %d but superseded by a snapshot before it was applied here", ans.index)
}

// request sends one proposal on sess and waits for its answer.
func (o *Observer) request(ctx context.Context, sess *observerSession, body []byte) (obsAnswerMsg, error) {
	id := o.nextReq.Add(1)
	ch := make(chan obsAnswerMsg, 1)
	sess.mu.Lock()
	sess.pending[id] = ch
	sess.mu.Unlock()
	defer func() {
		sess.mu.Lock()
		delete(sess.pending, id)
		sess.mu.Unlock()
	}()
	var timeoutMs uint32
	if dl, ok := ctx.Deadline(); ok {
		timeoutMs = uint32(max(time.Until(dl).Milliseconds(), 1))
	}
	hdr := binary.BigEndian.AppendUint64(nil, id)
	hdr = binary.BigEndian.AppendUint32(hdr, timeoutMs)
	sess.wmu.Lock()
	_ = sess.conn.SetWriteDeadline(time.Now().Add(observerWriteTimeout))
	err := writeObsFrame(sess.w, obsPropose, hdr, body)
	if err == nil {
		err = sess.w.Flush()
	}
	sess.wmu.Unlock()
	if err != nil {
		sess.conn.Close()
		return obsAnswerMsg{}, fmt.Errorf("%w: %w", ErrControllerLost, err)
	}
	select {
	case a := <-ch:
		return a, nil
	case <-sess.done:
		if o.ctx.Err() != nil {
			return obsAnswerMsg{}, ErrClosed
		}
		return obsAnswerMsg{}, ErrControllerLost
	case <-ctx.Done():
		return obsAnswerMsg{}, fmt.Errorf("metadata: proposal not answered: %w", ctx.Err())
	}
}

// Close disconnects and stops the subscriptions.
func (o *Observer) Close() error {
	o.mu.Lock()
	if o.mu.closed {
		o.mu.Unlock()
		return nil
	}
	o.mu.closed = true
	subs := o.mu.subs
	o.mu.subs = map[*subscriber]struct{}{}
	conn := o.mu.conn
	close(o.mu.appliedCh)
	o.mu.appliedCh = make(chan struct{})
	close(o.mu.sessCh)
	o.mu.sessCh = make(chan struct{})
	o.mu.Unlock()
	o.cancel()
	if conn != nil {
		conn.Close()
	}
	for s := range subs {
		close(s.stop)
	}
	o.wg.Wait()
	return nil
}

// run keeps a controller connection: it tries the controllers in turn,
// backing off after a round of failures, and resumes from its index.
func (o *Observer) run() {
	defer o.wg.Done()
	var backoff time.Duration
	failures := 0
	for i := 0; ; i++ {
		targets := o.controllerTargets()
		v := targets[i%len(targets)]
		progressed, err := o.follow(v)
		if o.ctx.Err() != nil {
			return
		}
		o.cfg.Logger.Info("metadata: controller connection ended", "controller", v.ID, "addr", v.Addr, "err", err)
		if progressed {
			failures, backoff = 0, 0
			continue
		}
		if failures++; failures%len(targets) != 0 {
			continue
		}
		backoff = min(max(2*backoff, 50*time.Millisecond), o.cfg.MaxBackoff)
		select {
		case <-o.ctx.Done():
			return
		case <-time.After(backoff):
		}
	}
}

// controllerTargets are the controllers to connect to: the quorum's
// membership as this observer has applied it (AddRaftVoter,
// RemoveRaftVoter and UpdateRaftVoter change it: a removed controller is
// left, an added or moved one found at its recorded address), with
// --controllers supplying addresses the log does not hold; --controllers
// alone while the log holds no membership (or none with an address).
func (o *Observer) controllerTargets() []Voter {
	st := o.view.Load().state
	if len(st.Controllers) == 0 {
		return o.cfg.Controllers // in the order given
	}
	var out []Voter
	for _, m := range MembersOf(st, o.cfg.Controllers) {
		if m.Addr != "" && m.ID != o.cfg.NodeID {
			out = append(out, Voter{ID: m.ID, Addr: m.Addr})
		}
	}
	if len(out) == 0 {
		return o.cfg.Controllers
	}
	return out
}

// follow runs one connection to controller v until it fails; progressed
// reports whether the controller sent anything.
func (o *Observer) follow(v Voter) (progressed bool, err error) {
	conn, err := o.cfg.TLS.dial(o.ctx, v.Addr, o.cfg.DialTimeout)
	if err != nil {
		return false, err
	}
	o.mu.Lock()
	if o.mu.closed {
		o.mu.Unlock()
		conn.Close()
		return false, ErrClosed
	}
	o.mu.conn = conn
	o.mu.Unlock()
	sess := &observerSession{conn: conn, done: make(chan struct{}), w: bufio.NewWriterSize(conn, 64<<10), pending: map[uint64]chan obsAnswerMsg{}}
	defer func() {
		conn.Close()
		close(sess.done)
		o.controller.Store(-1)
		o.mu.Lock()
		o.mu.conn = nil
		if o.mu.sess == sess {
			o.mu.sess = nil
		}
		o.mu.Unlock()
	}()

	hello := obsHelloMsg{version: observerVersion, nodeID: o.cfg.NodeID, index: o.index, clusterID: o.state.ClusterID}
	if o.resync {
		hello.flags |= helloWantSnapshot
	}
	var magic [4]byte
	binary.BigEndian.PutUint32(magic[:], observerMagic)
	sess.wmu.Lock()
	_ = conn.SetWriteDeadline(time.Now().Add(observerWriteTimeout))
	_, err = sess.w.Write(magic[:])
	if err == nil {
		err = writeObsFrame(sess.w, obsHello, hello.encode())
	}
	if err == nil {
		err = sess.w.Flush()
	}
	sess.wmu.Unlock()
	if err != nil {
		return false, err
	}

	r := bufio.NewReaderSize(conn, 64<<10)
	var leaderless time.Time // since when the controller has known no leader
	for {
		_ = conn.SetReadDeadline(time.Now().Add(o.cfg.IdleTimeout))
		typ, p, err := readObsFrame(r)
		if err != nil {
			return progressed, err
		}
		if !progressed {
			if typ == obsError {
				return false, fmt.Errorf("metadata: controller %d refused: %s", v.ID, p)
			}
			progressed = true
			o.controller.Store(v.ID)
			o.mu.Lock()
			o.mu.sess = sess
			close(o.mu.sessCh)
			o.mu.sessCh = make(chan struct{})
			o.mu.Unlock()
		}
		if err := o.handle(sess, typ, p); err != nil {
			return progressed, err
		}
		if o.leader.Load() < 0 {
			// A controller cut off from the quorum knows no leader and
			// applies nothing new: after IdleTimeout try another.
			if leaderless.IsZero() {
				leaderless = time.Now()
			} else if time.Since(leaderless) > o.cfg.IdleTimeout {
				return true, fmt.Errorf("metadata: controller %d has known no leader for %v", v.ID, o.cfg.IdleTimeout)
			}
		} else {
			leaderless = time.Time{}
		}
	}
}

// handle processes one frame from the controller.
func (o *Observer) handle(sess *observerSession, typ byte, p []byte) error {
	switch typ {
	case obsSnapshot, obsRecord:
		index, leader, data, err := decodeIndexLeader(p)
		if err != nil {
			return err
		}
		o.leader.Store(leader)
		if typ == obsSnapshot {
			return o.installSnapshot(index, data)
		}
		return o.applyRecord(index, data)
	case obsBeat:
		if len(p) < 12 {
			return fmt.Errorf("%w: beat of %d bytes", errObsFrame, len(p))
		}
		o.leader.Store(int32(binary.BigEndian.Uint32(p)))
	case obsAnswer:
		a, err := decodeAnswer(p)
		if err != nil {
			return err
		}
		sess.mu.Lock()
		ch := sess.pending[a.req]
		sess.mu.Unlock()
		if ch != nil {
			ch <- a // buffered; one answer per request
		}
	case obsError:
		return fmt.Errorf("metadata: controller error: %s", p)
	default:
		return fmt.Errorf("%w: type %q", errObsFrame, typ)
	}
	return nil
}

func (o *Observer) installSnapshot(index uint64, data []byte) error {
	if index < o.index {
		// A lagging controller's state would take subscribers back in
		// time: drop it and try another controller.
		return fmt.Errorf("metadata: snapshot at index %d from a controller behind this observer (at %d)", index, o.index)
	}
	state, err := cluster.DecodeState(data)
	if err != nil {
		return fmt.Errorf("metadata: snapshot from controller: %w", err)
	}
	o.snapshots.Add(1)
	before := o.state
	o.state, o.index, o.resync = state, index, false
	o.publish(Applied{Index: index, Before: before, After: state, Snapshot: true})
	return nil
}

func (o *Observer) applyRecord(index uint64, data []byte) error {
	if index <= o.index {
		return nil // already applied (not sent by a correct controller)
	}
	rec, err := cluster.DecodeRecord(data)
	if err == nil {
		var next cluster.State
		if next, err = cluster.Apply(o.state, rec); err == nil {
			a := Applied{Index: index, Record: rec, Before: o.state, After: next}
			o.state, o.index = next, index
			o.publish(a)
			return nil
		}
	}
	// The controller applied it; this state does not: resynchronise.
	o.resync = true
	return fmt.Errorf("metadata: record %d from the controller does not apply here; resynchronising: %w", index, err)
}

// publish makes the state visible and queues a for the subscribers.
func (o *Observer) publish(a Applied) {
	o.view.Store(&appliedView{index: o.index, state: o.state})
	o.mu.Lock()
	close(o.mu.appliedCh)
	o.mu.appliedCh = make(chan struct{})
	if o.mu.inflight > 0 {
		o.mu.recent = append(o.mu.recent, a)
		if len(o.mu.recent) > 2*recentLimit {
			o.mu.recent = append([]Applied(nil), o.mu.recent[len(o.mu.recent)-recentLimit:]...)
		}
	}
	subs := make([]*subscriber, 0, len(o.mu.subs))
	for s := range o.mu.subs {
		subs = append(subs, s)
	}
	o.mu.Unlock()
	for _, s := range subs {
		s.push([]Applied{a})
	}
}
