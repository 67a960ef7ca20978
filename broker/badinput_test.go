package broker

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// header builds a request header (v1) for key and version.
func header(key, version int16, correlationID int32) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(correlationID))
	return binary.BigEndian.AppendUint16(b, 0xffff) // null client id
}

func sized(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// TestBadFramesCloseOnlyTheirConnection sends malformed frames, each on its
// own connection: the broker closes that connection and keeps serving a
// bystander connection and new clients, and the data written before is
// intact afterwards.
func TestBadFramesCloseOnlyTheirConnection(t *testing.T) {
	tb := startTestBroker(t, func(c *Config) { c.SocketRequestMaxBytes = 1 << 20 })
	tb.createTopic("survivor", 1, nil)
	records := fixtureRecords(500, 20)
	bystander := tb.dialRaw()
	if got := bystander.produceRaw("survivor", 0, buildBatch(t, plainBatch(records...))); got.ErrorCode != 0 {
		t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		return b
	}
	meta := kmsg.NewPtrMetadataRequest()
	meta.Version = 12
	metaFrame := appendRequestFrame(nil, meta, 1)

	cases := []struct {
		name  string
		bytes []byte
	}{
		{"garbage produce body", sized(append(header(0, 9, 1), random(200)...))},
		{"garbage fetch body", sized(append(header(1, 12, 1), random(300)...))},
		{"size over socket.request.max.bytes", binary.BigEndian.AppendUint32(nil, 0x7fffffff)},
		{"size just over socket.request.max.bytes", binary.BigEndian.AppendUint32(nil, 1<<20+1)},
		{"negative size", binary.BigEndian.AppendUint32(nil, 0xfffffff0)},
		{"size zero", binary.BigEndian.AppendUint32(nil, 0)},
		{"frame shorter than a header", sized([]byte{0, 3, 0})},
		{"unknown api key", sized(header(999, 0, 1))},
		{"api key the broker does not serve", sized(header(kmsg.ShareGroupHeartbeat.Int16(), 0, 1))},
		{"client id overruns the frame", sized(append(header(3, 1, 1)[:8], 0x7f, 0xff))},
		{"truncated metadata body", sized(metaFrame[4 : len(metaFrame)-3])},
		{"flexible header with bad tags", sized(append(header(3, 12, 1), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))},
		{"produce v99", sized(header(0, 99, 1))},
		{"negative version", sized(header(3, -1, 1))},
	}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, tc := range cases {
		c := tb.dialRaw()
		if err := c.writeRaw(tc.bytes); err != nil {
			t.Fatalf("%s: write: %v", tc.name, err)
		}
		c.expectClosed(tc.name)
		if resp := roundTrip[*kmsg.MetadataResponse](bystander, meta); len(resp.Brokers) != 1 {
			t.Fatalf("after %s: bystander metadata has %d brokers", tc.name, len(resp.Brokers))
		}
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
		t.Errorf("%d MiB allocated while refusing oversized frames", grew>>20)
	}

	// A body cut short by the client closing its side.
	c := tb.dialRaw()
	if err := c.writeRaw(metaFrame[:len(metaFrame)-5]); err != nil {
		t.Fatal(err)
	}
	c.nc.(interface{ CloseWrite() error }).CloseWrite()
	c.expectClosed("body cut short")

	// Seeded random frames: whatever the broker does, it answers or
	// closes, and keeps serving.
	for i := 0; i < 200; i++ {
		c := tb.dialRaw()
		if err := c.writeRaw(sized(random(10 + rng.IntN(300)))); err != nil {
			t.Fatal(err)
		}
		_, _ = c.readFrame(2 * time.Second)
		c.nc.Close()
	}

	cl := tb.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"survivor": {0: kgo.NewOffset().AtStart()}}))
	consumeAllFranz(t, testContext(t), cl, records)
	if end := tb.logEnd("survivor", 0); end != int64(len(records)) {
		t.Fatalf("log end %d, want %d", end, len(records))
	}
}

// TestUnsupportedVersions: ApiVersions newer than ours gets a v0 answer
// with UNSUPPORTED_VERSION and our ranges (KIP-511); other APIs get the
// error in their own response when it has a top-level error code.
func TestUnsupportedVersions(t *testing.T) {
	tb := startTestBroker(t)
	c := tb.dialRaw()
	if err := c.writeRaw(sized(append(header(kmsg.ApiVersions.Int16(), 99, 7), 0))); err != nil {
		t.Fatal(err)
	}
	frame, err := c.readFrame(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if corr := int32(binary.BigEndian.Uint32(frame)); corr != 7 {
		t.Fatalf("correlation id %d, want 7", corr)
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	if err := resp.ReadFrom(frame[4:]); err != nil {
		t.Fatalf("ApiVersions v99 answer is not a v0 response: %v", err)
	}
	if resp.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("ApiVersions v99: error %v, want UNSUPPORTED_VERSION", kerr.ErrorForCode(resp.ErrorCode))
	}
	if len(resp.ApiKeys) != len(apis) {
		t.Fatalf("ApiVersions v99 lists %d apis, want %d", len(resp.ApiKeys), len(apis))
	}
	for _, k := range resp.ApiKeys {
		if a := apis[k.ApiKey]; a.minVersion != k.MinVersion || a.maxVersion != k.MaxVersion {
			t.Errorf("%s advertised %d-%d", kmsg.NameForKey(k.ApiKey), k.MinVersion, k.MaxVersion)
		}
	}
	// The connection stays usable after the KIP-511 answer.
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	if got := roundTrip[*kmsg.ApiVersionsResponse](c, req); got.ErrorCode != 0 {
		t.Fatalf("ApiVersions v3 after v99: %v", kerr.ErrorForCode(got.ErrorCode))
	}

	// Produce below its minimum (v2): its response has no top-level error
	// code, so the connection closes.
	old := tb.dialRaw()
	if err := old.writeRaw(sized(header(0, 2, 1))); err != nil {
		t.Fatal(err)
	}
	old.expectClosed("Produce v2")

	// An API one version beyond ours (where kmsg knows that version)
	// answers UNSUPPORTED_VERSION in that version when that version's
	// response carries a top-level error code, and closes the connection
	// otherwise: an answer without one would read as success.
	for _, a := range sortedAPIs() {
		probe := kmsg.RequestForKey(a.key)
		if a.key == kmsg.ApiVersions.Int16() || a.maxVersion >= probe.MaxVersion() {
			continue
		}
		probe.SetVersion(a.maxVersion + 1)
		conn := tb.dialRaw()
		corr := conn.send(probe)
		if !versionEncodesErrorCode(probe.ResponseKind(), a.maxVersion+1) {
			conn.expectClosed(fmt.Sprintf("%s v%d", a.name, a.maxVersion+1))
			continue
		}
		got, err := conn.readResponse(probe, corr, 10*time.Second)
		if err != nil {
			t.Errorf("%s v%d: %v", a.name, a.maxVersion+1, err)
			continue
		}
		if code := reflect.ValueOf(got).Elem().FieldByName("ErrorCode").Int(); code != int64(kerr.UnsupportedVersion.Code) {
			t.Errorf("%s v%d: answered with %v", a.name, a.maxVersion+1, kerr.ErrorForCode(int16(code)))
		}
	}
}

// versionEncodesErrorCode reports whether a response kind, at version, puts
// a top-level ErrorCode on the wire (FindCoordinator v4+ and OffsetFetch v8+
// moved theirs into per-item fields).
func versionEncodesErrorCode(resp kmsg.Response, version int16) bool {
	resp.SetVersion(version)
	f := reflect.ValueOf(resp).Elem().FieldByName("ErrorCode")
	if !f.IsValid() {
		return false
	}
	f.SetInt(int64(kerr.UnsupportedVersion.Code))
	back := kmsg.ResponseForKey(resp.Key())
	back.SetVersion(version)
	if back.ReadFrom(resp.AppendTo(nil)) != nil {
		return false
	}
	return reflect.ValueOf(back).Elem().FieldByName("ErrorCode").Int() == int64(kerr.UnsupportedVersion.Code)
}

// TestCorruptProduceAppendsNothing: a batch whose CRC or framing is wrong
// gets CORRUPT_MESSAGE and the log does not move.
func TestCorruptProduceAppendsNothing(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("crc", 1, map[string]*string{"max.message.bytes": ptr("4000")})
	c := tb.dialRaw()
	good := buildBatch(t, plainBatch(fixtureRecords(5, 21)...))
	if got := c.produceRaw("crc", 0, good); got.ErrorCode != 0 {
		t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	mutate := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	cases := []struct {
		name    string
		records []byte
		want    *kerr.Error
	}{
		{"flipped payload bit", mutate(func(b []byte) []byte { b[len(b)-3] ^= 0x10; return b }), kerr.CorruptMessage},
		{"flipped crc bit", mutate(func(b []byte) []byte { b[18] ^= 1; return b }), kerr.CorruptMessage},
		{"length past the end", mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], uint32(len(b))); return b }), kerr.CorruptMessage},
		{"length below the header", mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], 10); return b }), kerr.CorruptMessage},
		{"truncated batch", good[:len(good)-1], kerr.CorruptMessage},
		{"header only", good[:30], kerr.CorruptMessage},
		{"magic 1", mutate(func(b []byte) []byte { b[16] = 1; return b }), kerr.UnsupportedForMessageFormat},
		{"good batch then a corrupt one", append(append([]byte(nil), good...), mutate(func(b []byte) []byte { b[40] ^= 1; return b })...), kerr.CorruptMessage},
		{"batch over max.message.bytes", buildBatch(t, plainBatch(testRecord{value: make([]byte, 5000)})), kerr.MessageTooLarge},
	}
	for _, tc := range cases {
		got := c.produceRaw("crc", 0, tc.records)
		if got.ErrorCode != tc.want.Code {
			t.Errorf("%s: %v, want %v", tc.name, kerr.ErrorForCode(got.ErrorCode), tc.want)
		}
		if end := tb.logEnd("crc", 0); end != 5 {
			t.Fatalf("%s: log end %d, want 5", tc.name, end)
		}
	}
	fetch := roundTrip[*kmsg.FetchResponse](c, fetchRequest(12, "crc", [16]byte{}, map[int32]int64{0: 0}, 1<<20))
	if _, records := decodeBatches(t, fetch.Topics[0].Partitions[0].RecordBatches); len(records) != 5 {
		t.Fatalf("%d records readable after corrupt produces, want 5", len(records))
	}
}
