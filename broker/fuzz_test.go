package broker

// Fuzz targets for the bytes the broker reads from the network. Run one with
//
//	go test -run='^$' -fuzz=FuzzHandleFrame -fuzztime=30s ./broker/
//
// Seeds are real requests: every registered API at every version it
// serves, encoded by kmsg behind a request header.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// seedRequests returns one realistic request per registered API, at its
// newest version; callers set the versions they want.
func seedRequests(t testing.TB, topicID [16]byte) []kmsg.Request {
	fuzzTopic := "fuzz"
	batch := buildBatch(t, plainBatch(fixtureRecords(3, 30)...))
	idempotent := buildBatch(t, batchSpec{records: fixtureRecords(2, 31), codec: codecGzip, producerID: 1, epoch: 0, baseSeq: 0})

	produce := produceRequest(12, fuzzTopic, 0, batch)
	produceIdem := produceRequest(12, fuzzTopic, 0, idempotent)

	fetch := fetchRequest(16, fuzzTopic, topicID, map[int32]int64{0: 0, 1: 0}, 1<<20)
	fetch.MaxWaitMillis, fetch.MinBytes = 0, 1
	session := sessionFetch(16, fuzzTopic, topicID, 0, 0, map[int32]int64{0: 0}, []int32{1})

	list := listOffsetsRequest(10, fuzzTopic, 0, -1)
	listTs := listOffsetsRequest(10, fuzzTopic, 0, 0)

	meta := metadataFor(12, true, fuzzTopic, "fuzz-auto")
	metaID := metadataFor(12, false)
	mt := kmsg.NewMetadataRequestTopic()
	mt.TopicID = topicID
	metaID.Topics = append(metaID.Topics, mt)

	versions := kmsg.NewPtrApiVersionsRequest()
	versions.ClientSoftwareName, versions.ClientSoftwareVersion = "fuzz", "1"

	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "fuzz-new", 2, 1
	cc := kmsg.NewCreateTopicsRequestTopicConfig()
	cc.Name, cc.Value = "retention.ms", ptr("1000")
	ct.Configs = append(ct.Configs, cc)
	create.Topics = append(create.Topics, ct)

	del := kmsg.NewPtrDeleteTopicsRequest()
	del.TopicNames = []string{"fuzz-new"}
	dt := kmsg.NewDeleteTopicsRequestTopic()
	dt.Topic = ptr("fuzz-new")
	del.Topics = append(del.Topics, dt)

	delRecords := kmsg.NewPtrDeleteRecordsRequest()
	drt := kmsg.NewDeleteRecordsRequestTopic()
	drt.Topic = fuzzTopic
	drp := kmsg.NewDeleteRecordsRequestTopicPartition()
	drp.Partition, drp.Offset = 0, 1
	drt.Partitions = append(drt.Partitions, drp)
	delRecords.Topics = append(delRecords.Topics, drt)

	initPID := kmsg.NewPtrInitProducerIDRequest()
	initPID.ProducerID, initPID.ProducerEpoch = -1, -1

	epochs := kmsg.NewPtrOffsetForLeaderEpochRequest()
	epochs.ReplicaID = -1
	et := kmsg.NewOffsetForLeaderEpochRequestTopic()
	et.Topic = fuzzTopic
	ep := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	ep.Partition, ep.CurrentLeaderEpoch, ep.LeaderEpoch = 0, 0, 0
	et.Partitions = append(et.Partitions, ep)
	epochs.Topics = append(epochs.Topics, et)

	describe := kmsg.NewPtrDescribeConfigsRequest()
	describe.IncludeSynonyms = true
	for _, r := range []struct {
		typ  kmsg.ConfigResourceType
		name string
	}{{kmsg.ConfigResourceTypeTopic, fuzzTopic}, {kmsg.ConfigResourceTypeBroker, "1"}} {
		dr := kmsg.NewDescribeConfigsRequestResource()
		dr.ResourceType, dr.ResourceName = r.typ, r.name
		describe.Resources = append(describe.Resources, dr)
	}

	alter := kmsg.NewPtrAlterConfigsRequest()
	ar := kmsg.NewAlterConfigsRequestResource()
	ar.ResourceType, ar.ResourceName = kmsg.ConfigResourceTypeTopic, fuzzTopic
	ac := kmsg.NewAlterConfigsRequestResourceConfig()
	ac.Name, ac.Value = "retention.ms", ptr("86400000")
	ar.Configs = append(ar.Configs, ac)
	alter.Resources = append(alter.Resources, ar)

	grow := kmsg.NewPtrCreatePartitionsRequest()
	gt := kmsg.NewCreatePartitionsRequestTopic()
	gt.Topic, gt.Count = fuzzTopic, 3
	grow.Topics = append(grow.Topics, gt)

	incremental := kmsg.NewPtrIncrementalAlterConfigsRequest()
	ir := kmsg.NewIncrementalAlterConfigsRequestResource()
	ir.ResourceType, ir.ResourceName = kmsg.ConfigResourceTypeTopic, fuzzTopic
	ic := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	ic.Name, ic.Op, ic.Value = "cleanup.policy", kmsg.IncrementalAlterConfigOpAppend, ptr("compact")
	ir.Configs = append(ir.Configs, ic)
	incremental.Resources = append(incremental.Resources, ir)

	cluster := kmsg.NewPtrDescribeClusterRequest()
	cluster.EndpointType = 1

	return []kmsg.Request{produce, produceIdem, fetch, session, list, listTs, meta, metaID, versions, create, del,
		delRecords, initPID, epochs, describe, alter, grow, incremental, cluster}
}

// seedFrames encodes every seed request at every version we serve, plus
// one version past it, without the size prefix. Registered APIs without a
// hand-built seed get kmsg's default request.
func seedFrames(t testing.TB, topicID [16]byte) [][]byte {
	var out [][]byte
	reqs := seedRequests(t, topicID)
	seeded := map[int16]bool{}
	for _, req := range reqs {
		seeded[req.Key()] = true
	}
	for _, a := range sortedAPIs() {
		if !seeded[a.key] {
			reqs = append(reqs, kmsg.RequestForKey(a.key))
		}
	}
	for _, req := range reqs {
		api := apis[req.Key()]
		for v := api.minVersion; v <= min(api.maxVersion+1, req.MaxVersion()); v++ {
			req.SetVersion(v)
			out = append(out, appendRequestFrame(nil, req, int32(v)+100)[4:])
		}
	}
	return out
}

func FuzzParseRequestHeader(f *testing.F) {
	for _, frame := range seedFrames(f, [16]byte{1}) {
		f.Add(frame)
	}
	f.Add([]byte{})
	f.Add([]byte{0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 0})
	f.Fuzz(func(t *testing.T, frame []byte) {
		h, req, body, err := parseRequestHeader(frame)
		if err != nil {
			return
		}
		if len(frame) < 10 {
			t.Fatalf("accepted a %d-byte frame", len(frame))
		}
		if got := int16(binary.BigEndian.Uint16(frame)); h.apiKey != got || req.Key() != got {
			t.Fatalf("api key %d / %d, frame says %d", h.apiKey, req.Key(), got)
		}
		if got := int16(binary.BigEndian.Uint16(frame[2:])); h.apiVersion != got || req.GetVersion() != got {
			t.Fatalf("version %d / %d, frame says %d", h.apiVersion, req.GetVersion(), got)
		}
		if h.correlationID != int32(binary.BigEndian.Uint32(frame[4:])) {
			t.Fatalf("correlation id %d", h.correlationID)
		}
		if len(body) > len(frame)-10-len(h.clientID) || !bytes.HasSuffix(frame, body) {
			t.Fatalf("body of %d bytes is not a suffix of the %d-byte frame after the header", len(body), len(frame))
		}
	})
}

// captureConn is a net.Conn that records what the broker writes.
type captureConn struct{ out bytes.Buffer }

func (c *captureConn) Read([]byte) (int, error)         { return 0, io.EOF }
func (c *captureConn) Write(b []byte) (int, error)      { return c.out.Write(b) }
func (c *captureConn) Close() error                     { return nil }
func (c *captureConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *captureConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *captureConn) SetDeadline(time.Time) error      { return nil }
func (c *captureConn) SetReadDeadline(time.Time) error  { return nil }
func (c *captureConn) SetWriteDeadline(time.Time) error { return nil }

// newFuzzServer opens a broker that is not listening, with a topic holding
// records. Its context is cancelled so long polls return at once (the
// fuzzer must not wait out max_wait_ms); everything else behaves normally.
func newFuzzServer(f *testing.F) (*Server, [16]byte) {
	cfg := DefaultConfig()
	cfg.DataDir = f.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.HTTPListen = ""
	srv, err := NewServer(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	ts, terr := srv.topics.create("fuzz", 2, 1, nil, false)
	if terr != nil {
		f.Fatal(terr)
	}
	for i := 0; i < 3; i++ {
		res := srv.topics.partition("fuzz", 0).appendRecords(buildBatch(f, plainBatch(fixtureRecords(4, uint64(i))...)), srv.topics.topicConfig(ts))
		if res.Code != 0 {
			f.Fatalf("seed append: %d %s", res.Code, res.Message)
		}
	}
	srv.cancel()
	return srv, ts.meta.ID
}

// tooExpensive skips inputs that would create so many partitions that the
// fuzzer spends its time creating directories.
func tooExpensive(frame []byte) bool {
	_, req, body, err := parseRequestHeader(frame)
	if err != nil || req.ReadFrom(body) != nil {
		return false
	}
	const limit = 16
	switch r := req.(type) {
	case *kmsg.CreateTopicsRequest:
		for _, t := range r.Topics {
			if t.NumPartitions > limit || len(t.ReplicaAssignment) > limit {
				return true
			}
		}
	case *kmsg.CreatePartitionsRequest:
		for _, t := range r.Topics {
			if t.Count > limit {
				return true
			}
		}
	}
	return false
}

// FuzzHandleFrame feeds arbitrary frames through the real request path:
// header parsing, version checks, body decoding, the handler and the
// response encoding. A panic (even one the connection would recover from)
// fails, and every response must be framed correctly, carry the request's
// correlation id and decode with kmsg.
func FuzzHandleFrame(f *testing.F) {
	srv, topicID := newFuzzServer(f)
	for _, frame := range seedFrames(f, topicID) {
		f.Add(frame)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		if tooExpensive(frame) {
			return
		}
		conn := &captureConn{}
		c := &clientConn{s: srv, listener: srv.listeners[0], nc: conn, remote: "fuzz"}
		err := c.handleFrame(frame)
		if errors.Is(err, errHandlerPanic) {
			t.Fatal(err)
		}
		out := conn.out.Bytes()
		if err != nil || len(out) == 0 {
			return
		}
		if len(out) < 8 || int(binary.BigEndian.Uint32(out)) != len(out)-4 {
			t.Fatalf("response framing: %d bytes with size prefix %x", len(out), out[:min(4, len(out))])
		}
		if !bytes.Equal(out[4:8], frame[4:8]) {
			t.Fatalf("correlation id %x, request had %x", out[4:8], frame[4:8])
		}
		h, _, _, _ := parseRequestHeader(frame)
		version := h.apiVersion
		if api := apis[h.apiKey]; h.apiKey == kmsg.ApiVersions.Int16() && (version < api.minVersion || version > api.maxVersion) {
			version = 0
		}
		resp := kmsg.ResponseForKey(h.apiKey)
		resp.SetVersion(version)
		body := out[8:]
		if resp.IsFlexible() && h.apiKey != kmsg.ApiVersions.Int16() {
			if body, err = skipTaggedFields(body); err != nil {
				t.Fatalf("%s v%d response header: %v", kmsg.NameForKey(h.apiKey), version, err)
			}
		}
		if err := resp.ReadFrom(body); err != nil {
			t.Fatalf("%s v%d response does not decode: %v", kmsg.NameForKey(h.apiKey), version, err)
		}
	})
}

// TestSeedFramesAnswered runs every seed through a live broker over TCP:
// each real request at each served version gets a decodable answer.
func TestSeedFramesAnswered(t *testing.T) {
	tb := startTestBroker(t)
	id := tb.createTopic("fuzz", 2, nil)
	c := tb.dialRaw()
	if got := c.produceRaw("fuzz", 0, buildBatch(t, plainBatch(fixtureRecords(3, 32)...))); got.ErrorCode != 0 {
		t.Fatal(got.ErrorCode)
	}
	for _, req := range seedRequests(t, id) {
		api := apis[req.Key()]
		for v := api.minVersion; v <= api.maxVersion; v++ {
			req.SetVersion(v)
			corr := c.send(req)
			if _, err := c.readResponse(req, corr, 10*time.Second); err != nil {
				t.Fatalf("%s v%d: %v", kmsg.NameForKey(req.Key()), v, err)
			}
		}
	}
}
