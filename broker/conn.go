package broker

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/share"
	"github.com/strata-streaming/strata/broker/storage"
)

// clientConn serves one Kafka connection. Requests are read, handled and
// answered strictly in order, one at a time, as Kafka does: a client that
// pipelines gets its responses in the order it sent the requests.
type clientConn struct {
	s        *Server
	listener *kafkaListener
	nc       net.Conn // a *tls.Conn on SSL listeners
	remote   string
	// principal is who the connection authenticated as: User:ANONYMOUS on
	// PLAINTEXT and on SSL without a client certificate, the mapped
	// certificate subject with one (ssl.principal.mapping.rules).
	principal string
	// softwareName and softwareVersion are what the client sent in
	// ApiVersions v3+ (KIP-511), for KIP-714 subscription matching.
	softwareName, softwareVersion string
	// sasl is the SASL progress on SASL listeners (sasl.go).
	sasl saslConn
	// authz is the connection's cache of ACL decisions (authorize.go).
	authz  authzCache
	reader *bufio.Reader
	// stopping is set by Server.Close: finish the request in hand, read no more.
	stopping atomic.Bool
	writeBuf []byte
	readBuf  []byte
	// errLog bounds the request-path error lines of this connection (one
	// line per cause, then a count); nil until the first one.
	errLog *logLimiter
	// shareSessions are the share sessions this connection opened
	// (78_share_fetch.go), ended when it closes.
	shareSessions []*share.Session
}

// frameSafeToReuse reports whether the request's handler is known to keep
// no slice of the frame once it returns, so the buffer can be reused for the
// next request. Other APIs (group protocol metadata, say) may retain bytes.
func frameSafeToReuse(frame []byte) bool {
	switch int16(binary.BigEndian.Uint16(frame)) {
	case kmsg.Produce.Int16(), kmsg.Fetch.Int16(), kmsg.ListOffsets.Int16(), kmsg.Metadata.Int16(), kmsg.ApiVersions.Int16():
		return true
	}
	return false
}

// maxRetainedReadBuffer bounds the request buffer a connection keeps
// between requests.
const maxRetainedReadBuffer = 8 << 20

func newClientConn(s *Server, l *kafkaListener, nc net.Conn) *clientConn {
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	remote := nc.RemoteAddr().String()
	if l.tls != nil {
		nc = tls.Server(nc, l.tls)
	}
	return &clientConn{s: s, listener: l, nc: nc, remote: remote, principal: anonymousPrincipal, reader: bufio.NewReaderSize(nc, 64<<10)}
}

// anonymousPrincipal is Kafka's principal of unauthenticated connections.
const anonymousPrincipal = "User:ANONYMOUS"

// tlsHandshakeTimeout bounds a TLS handshake: a client that connects and
// says nothing does not hold a goroutine.
const tlsHandshakeTimeout = 10 * time.Second

// handshake completes TLS on SSL listeners and takes the principal from
// the client certificate.
func (c *clientConn) handshake() error {
	tc, ok := c.nc.(*tls.Conn)
	if !ok {
		return nil
	}
	_ = tc.SetDeadline(time.Now().Add(tlsHandshakeTimeout))
	if err := tc.Handshake(); err != nil {
		return fmt.Errorf("tls handshake: %w", err)
	}
	_ = tc.SetDeadline(time.Time{})
	name, err := c.listener.spec.tls.PeerPrincipal(tc.ConnectionState())
	if err != nil {
		return err
	}
	if name != "" {
		c.principal = "User:" + name
	}
	return nil
}

// stopReading makes the connection finish its current request and close.
func (c *clientConn) stopReading() {
	c.stopping.Store(true)
	_ = c.nc.SetReadDeadline(time.Now())
	// A client that stopped reading must not hold up shutdown.
	_ = c.nc.SetWriteDeadline(time.Now().Add(shutdownWriteTimeout))
}

const (
	// responseWriteTimeout bounds writing one response: a client that
	// reads nothing for this long loses its connection instead of pinning
	// a goroutine and files forever.
	responseWriteTimeout = 60 * time.Second
	// shutdownWriteTimeout bounds the last response during shutdown.
	shutdownWriteTimeout = 5 * time.Second
)

// setWriteDeadline arms the deadline for one response.
func (c *clientConn) setWriteDeadline() {
	timeout := responseWriteTimeout
	if c.stopping.Load() {
		timeout = shutdownWriteTimeout
	}
	_ = c.nc.SetWriteDeadline(time.Now().Add(timeout))
}

// requestHeader is Kafka's request header (v0–v2).
type requestHeader struct {
	apiKey        int16
	apiVersion    int16
	correlationID int32
	clientID      string
}

// errCloseConn ends a connection after one log line.
var errCloseConn = errors.New("broker: closing connection")

func (c *clientConn) serve() {
	defer c.nc.Close()
	defer func() {
		if c.errLog != nil {
			c.errLog.flush(true)
		}
		if len(c.shareSessions) > 0 {
			c.s.shares.closeConnSessions(c.shareSessions)
		}
	}()
	if c.listener.sasl != nil && c.s.authFailures.blocked(hostOf(c.remote), time.Now()) {
		c.logClose(errors.New("too many failed authentications from this host; try again later"))
		return
	}
	if err := c.handshake(); err != nil {
		if !c.stopping.Load() && !errors.Is(err, io.EOF) {
			c.logClose(err)
		}
		return
	}
	for !c.stopping.Load() {
		frame, err := c.readFrame()
		if err != nil {
			if !errors.Is(err, io.EOF) && !c.stopping.Load() && !isClosedConnErr(err) {
				c.logClose(err)
			}
			return
		}
		err = c.handleFrame(frame)
		if !frameSafeToReuse(frame) {
			c.readBuf = nil // a handler may keep slices of this frame
		}
		if err != nil {
			if !isClosedConnErr(err) {
				c.logClose(err)
			}
			return
		}
	}
}

// logClose logs why the broker closes a connection: once per remote host
// and reason within logRepeatInterval, then with a count, so a client
// that reconnects and fails in a loop writes a line a minute, not a line
// a connection. A request this broker does not serve is logged by
// logUnsupported instead.
func (c *clientConn) logClose(err error) {
	if ue, ok := errors.AsType[*unsupportedRequestError](err); ok {
		c.logUnsupported(ue, "connection closed")
		return
	}
	reason := err.Error()
	c.s.connLog.log(slog.LevelWarn, hostOf(c.remote)+"\x00"+reason, "closing connection", "remote", c.remote, "reason", reason)
}

// unsupportedRequestError is a request for an API key this broker does not
// serve (served false), or a version of one outside the served range.
type unsupportedRequestError struct {
	key, version int16
	clientID     string
	served       bool
	// minVersion and maxVersion are the served range of a served key.
	minVersion, maxVersion int16
}

func (e *unsupportedRequestError) Error() string {
	if !e.served {
		return fmt.Sprintf("unsupported API key %d (%s)", e.key, kmsg.NameForKey(e.key))
	}
	return fmt.Sprintf("unsupported version %d of %s (this broker serves v%d-v%d)", e.version, kmsg.NameForKey(e.key), e.minVersion, e.maxVersion)
}

// logUnsupported logs a request this broker does not serve, answered with
// UNSUPPORTED_VERSION or closing the connection (outcome), at INFO: a
// client probing for an API or version the broker lacks is worth knowing,
// not a warning. One line per remote host and API key within
// logRepeatInterval, then with a count (connLog), so a connection repeating
// the request, or a client reconnecting to repeat it, writes a line a
// minute, not one per request.
func (c *clientConn) logUnsupported(e *unsupportedRequestError, outcome string) {
	attrs := []any{"remote", c.remote, "client_id", e.clientID, "api", kmsg.NameForKey(e.key), "api_key", e.key, "version", e.version}
	if e.served {
		attrs = append(attrs, "served_versions", fmt.Sprintf("%d-%d", e.minVersion, e.maxVersion))
	}
	attrs = append(attrs, "outcome", outcome)
	c.s.connLog.log(slog.LevelInfo, hostOf(c.remote)+"\x00unsupported\x00"+strconv.Itoa(int(e.key)), "unsupported request", attrs...)
}

// logError logs a request-path error of this connection once per cause
// (msg) and counts its repeats: the count goes out with the cause's next
// line after logRepeatInterval and when the connection closes. A client
// that repeats a failing request thousands of times a second costs a line
// a minute.
func (rc *requestContext) logError(msg string, attrs ...any) {
	c := rc.conn
	if c == nil {
		rc.s.logger.Error(msg, attrs...)
		return
	}
	if c.errLog == nil {
		c.errLog = newLogLimiter(rc.s.logger, logRepeatInterval)
	}
	attrs = append(attrs, "remote", c.remote, "client_id", rc.header.clientID)
	c.errLog.log(slog.LevelError, msg, msg, attrs...)
}

func isClosedConnErr(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF)
}

// readFrame reads one size-prefixed request, refusing sizes over
// socket.request.max.bytes before allocating anything.
func (c *clientConn) readFrame() ([]byte, error) {
	var sizeBuf [4]byte
	if _, err := io.ReadFull(c.reader, sizeBuf[:]); err != nil {
		return nil, err
	}
	size := int32(binary.BigEndian.Uint32(sizeBuf[:]))
	if size < 8 {
		return nil, fmt.Errorf("malformed request: frame size %d", size)
	}
	if size > c.s.cfg.SocketRequestMaxBytes {
		c.s.metrics.errorsTotal.WithLabelValues("INVALID_REQUEST").Inc()
		return nil, fmt.Errorf("request of %d bytes exceeds socket.request.max.bytes (%d)", size, c.s.cfg.SocketRequestMaxBytes)
	}
	// Requests are served one at a time, so one buffer per connection is
	// reused for the next frame, but only after an API whose handler keeps
	// no slice of the frame once it returns (frameSafeToReuse: Produce
	// writes record bytes to the log before returning; kmsg copies
	// strings). After any other API the buffer is dropped (serve), since
	// its handler may keep bytes (group protocol metadata, say); unusually
	// large buffers are dropped too.
	if int(size) > cap(c.readBuf) {
		c.readBuf = make([]byte, size)
	}
	frame := c.readBuf[:size]
	if _, err := io.ReadFull(c.reader, frame); err != nil {
		return nil, err
	}
	if cap(c.readBuf) > maxRetainedReadBuffer {
		c.readBuf = nil
	}
	return frame, nil
}

// parseRequestHeader splits a frame into header and body. flexible reports
// whether the header carries tagged fields (request header v2).
func parseRequestHeader(frame []byte) (requestHeader, kmsg.Request, []byte, error) {
	var h requestHeader
	if len(frame) < 10 {
		return h, nil, nil, errors.New("malformed request: short header")
	}
	h.apiKey = int16(binary.BigEndian.Uint16(frame[0:]))
	h.apiVersion = int16(binary.BigEndian.Uint16(frame[2:]))
	h.correlationID = int32(binary.BigEndian.Uint32(frame[4:]))
	n := int16(binary.BigEndian.Uint16(frame[8:]))
	rest := frame[10:]
	if n > 0 {
		if int(n) > len(rest) {
			return h, nil, nil, errors.New("malformed request: client id overruns frame")
		}
		h.clientID = string(rest[:n])
		rest = rest[n:]
	}
	req := kmsg.RequestForKey(h.apiKey)
	if req == nil {
		return h, nil, nil, &unsupportedRequestError{key: h.apiKey, version: h.apiVersion, clientID: h.clientID}
	}
	req.SetVersion(h.apiVersion)
	if req.IsFlexible() {
		var err error
		rest, err = skipTaggedFields(rest)
		if err != nil {
			return h, nil, nil, err
		}
	}
	return h, req, rest, nil
}

func skipTaggedFields(b []byte) ([]byte, error) {
	count, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, errors.New("malformed request: bad tagged field count")
	}
	b = b[n:]
	for i := uint64(0); i < count; i++ {
		if _, n = binary.Uvarint(b); n <= 0 {
			return nil, errors.New("malformed request: bad tag")
		}
		b = b[n:]
		size, n := binary.Uvarint(b)
		if n <= 0 || size > uint64(len(b)-n) {
			return nil, errors.New("malformed request: bad tag size")
		}
		b = b[n+int(size):]
	}
	return b, nil
}

// requestContext is what a handler sees of the request beyond its body.
type requestContext struct {
	s      *Server
	conn   *clientConn
	header requestHeader
	// noResponse is set by handlers that must not answer (acks=0 produce).
	noResponse bool
	// closeAfter, when set, closes the connection instead of answering and
	// says why (a failed acks=0 produce has no other way to tell the client).
	closeAfter string
	// closeAfterResponse, when set, closes the connection once the
	// response is written (a failed SASL authentication).
	closeAfterResponse string
	// waited is how long the handler blocked on other work (a fetch's
	// long poll, replication for acks=all): not counted against
	// request_percentage.
	waited time.Duration
	// throttle is a throttle time the handler decided (a controller
	// mutation quota); the connection takes the longest of it and the
	// byte and request quotas'.
	throttle time.Duration
}

// countError records a Kafka error code in the errors metric and returns it.
func (rc *requestContext) countError(code int16) int16 {
	if code != 0 {
		name := "UNKNOWN"
		if e := kerr.ErrorForCode(code); e != nil {
			if ke, ok := e.(*kerr.Error); ok {
				name = ke.Message
			}
		}
		rc.s.metrics.errorsTotal.WithLabelValues(name).Inc()
	}
	return code
}

// errHandlerPanic marks a request whose decoding or handling panicked: the
// connection closes, the server keeps running. Fuzz tests look for it.
var errHandlerPanic = errors.New("broker: internal error")

func (c *clientConn) handleFrame(frame []byte) (err error) {
	var h requestHeader
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w handling %s v%d: %v", errHandlerPanic, kmsg.NameForKey(h.apiKey), h.apiVersion, r)
		}
	}()
	if c.sasl.legacy && c.sasl.ex != nil {
		return c.serveLegacySASL(frame)
	}
	h, req, body, err := parseRequestHeader(frame)
	if err != nil {
		return err
	}
	if err := c.checkSASL(h.apiKey); err != nil {
		return err
	}
	api, ok := lookupAPI(&c.s.cfg, h.apiKey)
	if !ok {
		return &unsupportedRequestError{key: h.apiKey, version: h.apiVersion, clientID: h.clientID}
	}
	rc := &requestContext{s: c.s, conn: c, header: h}
	start := time.Now()
	if h.apiVersion < api.minVersion || h.apiVersion > api.maxVersion {
		return c.unsupportedVersion(rc, req, api)
	}
	if err := req.ReadFrom(body); err != nil {
		return fmt.Errorf("malformed %s v%d request: %v", kmsg.NameForKey(h.apiKey), h.apiVersion, err)
	}
	if c.s.cfg.authorizationEnabled() && !apiChecksACLs[h.apiKey] && !rc.authorizeCluster(acl.OpAlter) {
		return c.clusterAuthorizationFailed(rc, req)
	}
	resp := api.handle(rc, req)
	took := time.Since(start)
	c.s.metrics.requestLatency.WithLabelValues(api.name).Observe(took.Seconds())
	if c.s.reqLog.Enabled(context.Background(), slog.LevelDebug) {
		c.s.reqLog.Debug("request", "api", api.name, "version", h.apiVersion, "correlation_id", h.correlationID, "client_id", h.clientID, "client", c.remote, "principal", c.principal, "took", took)
	}
	if rc.closeAfter != "" {
		return fmt.Errorf("%w: %s", errCloseConn, rc.closeAfter)
	}
	throttle := c.quotaThrottle(rc, req, len(frame), resp, took)
	if !rc.noResponse && resp != nil {
		setThrottle(resp, throttle)
		if err := c.writeResponse(h, resp); err != nil {
			return err
		}
	}
	if rc.closeAfterResponse != "" {
		return fmt.Errorf("%w: %s", errCloseConn, rc.closeAfterResponse)
	}
	// KIP-219: the response goes out at once, telling the client how long
	// to back off, and the connection reads nothing more until then.
	c.mute(throttle)
	return nil
}

// checkSASL refuses requests a SASL connection may not send yet: anything
// but ApiVersions, SaslHandshake and SaslAuthenticate before it has
// authenticated, and anything but a re-authentication once its session
// has expired (KIP-368).
func (c *clientConn) checkSASL(key int16) error {
	if c.listener.sasl == nil || saslAllowedBeforeAuth(key) {
		return nil
	}
	if !c.sasl.authenticated {
		return fmt.Errorf("%s before SASL authentication", kmsg.NameForKey(key))
	}
	if !c.sasl.expires.IsZero() && time.Now().After(c.sasl.expires) {
		return errors.New("SASL session expired (connections.max.reauth.ms or the credential's lifetime) without re-authentication")
	}
	return nil
}

// setPrincipal records who the connection is.
func (c *clientConn) setPrincipal(p string) { c.principal = p }

// errReauthPrincipal: a re-authentication may not change the principal.
var errReauthPrincipal = errors.New("re-authentication as a different principal")

// serveLegacySASL answers one raw SASL token after SaslHandshake v0.
func (c *clientConn) serveLegacySASL(token []byte) error {
	reply, _, err := c.saslStep(token)
	if err != nil {
		return fmt.Errorf("SASL authentication failed: %w", err)
	}
	c.setWriteDeadline()
	buf := binary.BigEndian.AppendUint32(nil, uint32(len(reply)))
	_, err = c.nc.Write(append(buf, reply...))
	if c.sasl.authenticated {
		c.sasl.legacy = false
	}
	return err
}

// unsupportedVersion answers UNSUPPORTED_VERSION: ApiVersions in its v0
// form with our ranges (KIP-511; the usual first exchange of a client
// newer than the broker, not logged), other APIs in the requested version
// when that version's response carries a top-level error code, else the
// connection closes (as Kafka closes it for any unsupported version); both
// are logged at INFO (logUnsupported).
func (c *clientConn) unsupportedVersion(rc *requestContext, req kmsg.Request, api apiDef) error {
	code := rc.countError(kerr.UnsupportedVersion.Code)
	if rc.header.apiKey == kmsg.ApiVersions.Int16() {
		resp := apiVersionsResponse(&c.s.cfg, 0)
		resp.ErrorCode = code
		return c.writeResponse(rc.header, resp)
	}
	unsupported := &unsupportedRequestError{key: rc.header.apiKey, version: rc.header.apiVersion, clientID: rc.header.clientID,
		served: true, minVersion: api.minVersion, maxVersion: api.maxVersion}
	if resp := topLevelError(rc, req, code); resp != nil {
		c.logUnsupported(unsupported, "answered UNSUPPORTED_VERSION")
		return c.writeResponse(rc.header, resp)
	}
	return unsupported
}

// topLevelError returns req's response carrying code as its top-level
// error, or nil when the requested version has no such field on the wire.
func topLevelError(rc *requestContext, req kmsg.Request, code int16) kmsg.Response {
	if rc.header.apiVersion > req.MaxVersion() || rc.header.apiVersion < 0 {
		return nil
	}
	resp := req.ResponseKind()
	resp.SetVersion(rc.header.apiVersion)
	f := reflect.ValueOf(resp).Elem().FieldByName("ErrorCode")
	if !f.IsValid() || f.Kind() != reflect.Int16 {
		return nil
	}
	f.SetInt(int64(code))
	if !topLevelErrorEncoded(resp, code) {
		return nil
	}
	return resp
}

// clusterAuthorizationFailed answers a request of an API whose handler
// does not authorize (apiChecksACLs) from a principal without ALTER on
// the cluster: CLUSTER_AUTHORIZATION_FAILED where the response has a
// top-level error, else the connection closes with a log line.
func (c *clientConn) clusterAuthorizationFailed(rc *requestContext, req kmsg.Request) error {
	code := rc.countError(kerr.ClusterAuthorizationFailed.Code)
	if resp := topLevelError(rc, req, code); resp != nil {
		return c.writeResponse(rc.header, resp)
	}
	return fmt.Errorf("%s by %s needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED)", kmsg.NameForKey(rc.header.apiKey), c.principal)
}

// topLevelErrorEncoded reports whether resp's version carries its ErrorCode
// field on the wire: some versions moved errors into per-item fields
// (FindCoordinator v4+, OffsetFetch v8+), and answering with the field
// silently dropped would tell the client "no error".
func topLevelErrorEncoded(resp kmsg.Response, code int16) bool {
	back := kmsg.ResponseForKey(resp.Key())
	back.SetVersion(resp.GetVersion())
	if back.ReadFrom(resp.AppendTo(nil)) != nil {
		return false
	}
	f := reflect.ValueOf(back).Elem().FieldByName("ErrorCode")
	return f.IsValid() && f.Int() == int64(code)
}

// writeResponse frames and sends one response. Fetch responses carry file
// chunks that go to the socket with sendfile.
func (c *clientConn) writeResponse(h requestHeader, resp kmsg.Response) error {
	c.setWriteDeadline()
	buf := c.writeBuf[:0]
	buf = append(buf, 0, 0, 0, 0)
	buf = binary.BigEndian.AppendUint32(buf, uint32(h.correlationID))
	if resp.IsFlexible() && h.apiKey != kmsg.ApiVersions.Int16() {
		buf = append(buf, 0) // response header v1: empty tagged fields
	}
	if fr, ok := resp.(*fetchReply); ok {
		defer fr.release()
		return c.writeFetchReply(buf, fr)
	}
	buf = resp.AppendTo(buf)
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	if cap(buf) <= 1<<20 {
		c.writeBuf = buf
	}
	_, err := c.nc.Write(buf)
	return err
}

// writeFetchReply writes the pre-encoded pieces of a fetch response; record
// bytes go straight from the segment file to the socket.
func (c *clientConn) writeFetchReply(head []byte, fr *fetchReply) error {
	total := int64(len(head) - 4)
	for _, p := range fr.pieces {
		total += int64(len(p.bytes)) + p.chunk.Len
	}
	binary.BigEndian.PutUint32(head, uint32(total))
	tc, ok := c.nc.(*net.TCPConn)
	if !ok {
		return c.writeFetchReplyCopy(head, fr)
	}
	pending := head
	for _, p := range fr.pieces {
		pending = append(pending, p.bytes...)
		if p.chunk.Len == 0 {
			continue
		}
		if _, err := c.nc.Write(pending); err != nil {
			return err
		}
		pending = pending[:0]
		if err := sendChunk(tc, p.chunk); err != nil {
			return err
		}
	}
	if len(pending) > 0 {
		_, err := c.nc.Write(pending)
		return err
	}
	return nil
}

// replyWriters buffer the fetch responses of connections that cannot use
// sendfile (TLS): headers and record bytes go out in large writes (full
// TLS records), and a fetch of many megabytes costs no allocation.
var replyWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 256<<10) }}

// writeFetchReplyCopy is writeFetchReply for those connections: pread
// into the buffer, then the connection's Write (which encrypts).
func (c *clientConn) writeFetchReplyCopy(head []byte, fr *fetchReply) error {
	bw := replyWriters.Get().(*bufio.Writer)
	bw.Reset(c.nc)
	defer func() {
		bw.Reset(nil)
		replyWriters.Put(bw)
	}()
	_, _ = bw.Write(head)
	for _, p := range fr.pieces {
		_, _ = bw.Write(p.bytes)
		if p.chunk.Len == 0 {
			continue
		}
		n, err := io.Copy(bw, io.NewSectionReader(p.chunk.File, p.chunk.Pos, p.chunk.Len))
		if err != nil {
			return err
		}
		if n != p.chunk.Len {
			return io.ErrUnexpectedEOF // file shorter than the chunk
		}
	}
	return bw.Flush()
}

// sendfileBytes counts bytes sent with sendfile(2); tests read it to prove
// the zero-copy path is taken.
var sendfileBytes atomic.Int64

// sendChunk sends a file range with sendfile(2) at an explicit offset (so
// concurrent readers of one segment never share a file position).
func sendChunk(tc *net.TCPConn, chunk storage.FileChunk) error {
	dst, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	src, err := chunk.File.SyscallConn()
	if err != nil {
		return err
	}
	offset, remain := chunk.Pos, chunk.Len
	var sendErr, writeErr error
	ctrlErr := src.Control(func(srcFD uintptr) {
		writeErr = dst.Write(func(dstFD uintptr) bool {
			for remain > 0 {
				n, err := syscall.Sendfile(int(dstFD), int(srcFD), &offset, int(min(remain, 1<<30)))
				if n > 0 {
					remain -= int64(n)
					sendfileBytes.Add(int64(n))
				}
				switch {
				case errors.Is(err, syscall.EAGAIN):
					return false // wait until the socket is writable
				case errors.Is(err, syscall.EINTR):
					continue
				case err != nil:
					sendErr = err
					return true
				case n == 0:
					sendErr = io.ErrUnexpectedEOF // file shorter than the chunk
					return true
				}
			}
			return true
		})
	})
	if ctrlErr != nil {
		return ctrlErr
	}
	if writeErr != nil {
		return writeErr
	}
	return sendErr
}
