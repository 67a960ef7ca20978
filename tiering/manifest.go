package tiering

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ManifestVersion is the only manifest layout this code writes and reads.
const ManifestVersion = 1

// maxManifestBytes bounds what LoadManifest reads: a partition with 100 000
// remote segments stays far below it.
const maxManifestBytes = 256 << 20

// ErrInvalidManifest reports a manifest object that does not decode or breaks
// the rules Validate checks.
var ErrInvalidManifest = errors.New("tiering: invalid manifest")

// Manifest is the source of truth for one partition's remote segments. It is
// written after the segment objects it names, replacing the previous
// manifest whole, so a segment is remote exactly when the durable manifest
// lists it: an object that no manifest names is garbage (a partial or
// superseded upload), never data.
//
// The manifest also carries what is needed to rebuild the topic from the
// bucket alone: its name, ID, partition count and config overrides.
type Manifest struct {
	Version    int               `json:"version"`
	Topic      string            `json:"topic"`
	TopicID    string            `json:"topic_id"` // 32 lowercase hex digits
	Partition  int32             `json:"partition"`
	Partitions int32             `json:"partitions"`        // topic partition count when written
	Configs    map[string]string `json:"configs,omitempty"` // topic config overrides when written
	// LogStartOffset is the first offset readers may fetch from the remote
	// log; records below it are deleted (retention or DeleteRecords) even if
	// their segment is still listed.
	LogStartOffset int64           `json:"log_start_offset"`
	Segments       []RemoteSegment `json:"segments"` // ascending, contiguous or with gaps, never overlapping
}

// RemoteSegment is one uploaded segment: its .log, .index and .timeindex
// objects share the key stem SegmentKey(prefix, BaseOffset, UploadID, …).
type RemoteSegment struct {
	BaseOffset           int64        `json:"base_offset"`
	NextOffset           int64        `json:"next_offset"` // offset after the last batch
	Size                 int64        `json:"size"`        // bytes of the .log object
	OffsetIndexSize      int64        `json:"index_size"`
	TimeIndexSize        int64        `json:"timeindex_size"`
	TxnIndexSize         int64        `json:"txnindex_size,omitempty"` // 0: no .txnindex object (no aborted transaction)
	MaxTimestamp         int64        `json:"max_timestamp"`           // -1 if no record has one
	OffsetOfMaxTimestamp int64        `json:"offset_of_max_timestamp"`
	CRC32C               uint32       `json:"crc32c"` // of the .log bytes
	UploadID             string       `json:"upload_id"`
	LeaderEpochs         []EpochStart `json:"leader_epochs,omitempty"`
	UploadedAtMs         int64        `json:"uploaded_at_ms"`
}

// EpochStart says leader epoch Epoch wrote its first record of the segment
// at StartOffset.
type EpochStart struct {
	Epoch       int32 `json:"epoch"`
	StartOffset int64 `json:"start_offset"`
}

// NextOffset is the offset after the last remote segment, or
// LogStartOffset when there is none: local data from here on is not remote.
func (m *Manifest) NextOffset() int64 {
	if len(m.Segments) == 0 {
		return m.LogStartOffset
	}
	return m.Segments[len(m.Segments)-1].NextOffset
}

// StartOffset is the first readable remote offset: the larger of
// LogStartOffset and the first segment's base; equal to NextOffset when no
// remote record is readable.
func (m *Manifest) StartOffset() int64 {
	if len(m.Segments) == 0 {
		return m.LogStartOffset
	}
	return max(m.LogStartOffset, m.Segments[0].BaseOffset)
}

// Bytes is the total size of the listed .log objects.
func (m *Manifest) Bytes() int64 {
	var n int64
	for _, s := range m.Segments {
		n += s.Size
	}
	return n
}

// Find returns the index of the segment holding offset, or false when
// offset is below StartOffset, at or past NextOffset, or in a gap.
func (m *Manifest) Find(offset int64) (int, bool) {
	if offset < m.StartOffset() {
		return 0, false
	}
	lo, hi := 0, len(m.Segments)
	for lo < hi {
		mid := (lo + hi) / 2
		if m.Segments[mid].NextOffset <= offset {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == len(m.Segments) || m.Segments[lo].BaseOffset > offset {
		// A gap (compaction can leave one between segments): the caller
		// continues at the next segment's base.
		return lo, false
	}
	return lo, true
}

// Clone returns a deep copy, so a caller can change it while readers use
// the original.
func (m *Manifest) Clone() *Manifest {
	c := *m
	c.Segments = make([]RemoteSegment, len(m.Segments))
	for i, s := range m.Segments {
		s.LeaderEpochs = append([]EpochStart(nil), s.LeaderEpochs...)
		c.Segments[i] = s
	}
	if m.Configs != nil {
		c.Configs = make(map[string]string, len(m.Configs))
		for k, v := range m.Configs {
			c.Configs[k] = v
		}
	}
	return &c
}

// Validate checks the invariants every reader relies on.
func (m *Manifest) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidManifest, fmt.Sprintf(format, args...))
	}
	switch {
	case m.Version != ManifestVersion:
		return bad("version %d, want %d", m.Version, ManifestVersion)
	case m.Topic == "" || strings.ContainsAny(m.Topic, "/\x00"):
		return bad("topic name %q", m.Topic)
	case !isHexID(m.TopicID, 32):
		return bad("topic id %q is not 32 hex digits", m.TopicID)
	case m.Partition < 0 || m.Partitions <= m.Partition:
		return bad("partition %d of %d", m.Partition, m.Partitions)
	case m.LogStartOffset < 0:
		return bad("log start offset %d", m.LogStartOffset)
	}
	prevNext := int64(-1)
	for i, s := range m.Segments {
		switch {
		case s.BaseOffset < 0 || s.NextOffset <= s.BaseOffset:
			return bad("segment %d: offsets [%d, %d)", i, s.BaseOffset, s.NextOffset)
		case s.BaseOffset < prevNext:
			return bad("segment %d: base offset %d overlaps the previous segment ending at %d", i, s.BaseOffset, prevNext)
		case s.Size <= 0 || s.OffsetIndexSize < 0 || s.TimeIndexSize < 0 || s.TxnIndexSize < 0:
			return bad("segment %d: sizes %d/%d/%d/%d", i, s.Size, s.OffsetIndexSize, s.TimeIndexSize, s.TxnIndexSize)
		case !isHexID(s.UploadID, 16):
			return bad("segment %d: upload id %q is not 16 hex digits", i, s.UploadID)
		}
		prevEpoch, prevStart := int32(-1), int64(-1)
		for _, e := range s.LeaderEpochs {
			if e.Epoch <= prevEpoch || e.StartOffset <= prevStart || e.StartOffset < s.BaseOffset || e.StartOffset >= s.NextOffset {
				return bad("segment %d: leader epoch %d at %d out of order or outside the segment", i, e.Epoch, e.StartOffset)
			}
			prevEpoch, prevStart = e.Epoch, e.StartOffset
		}
		prevNext = s.NextOffset
	}
	return nil
}

// EncodeManifest renders m as indented JSON (small enough, and readable with
// any S3 tool when recovering by hand). It validates first.
func EncodeManifest(m *Manifest) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return json.MarshalIndent(m, "", " ")
}

// DecodeManifest parses and validates a manifest object.
func DecodeManifest(data []byte) (*Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidManifest, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the manifest", ErrInvalidManifest)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// LoadManifest reads and decodes the manifest at key. A missing manifest is
// an error wrapping ErrNotFound.
func LoadManifest(ctx context.Context, store ObjectStore, key string) (*Manifest, error) {
	r, err := store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("tiering: read manifest %s: %w", key, err)
	}
	if len(data) > maxManifestBytes {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrInvalidManifest, key, maxManifestBytes)
	}
	m, err := DecodeManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return m, nil
}

// SaveManifest validates m and writes it at key, replacing the previous one.
func SaveManifest(ctx context.Context, store ObjectStore, key string, m *Manifest) error {
	data, err := EncodeManifest(m)
	if err != nil {
		return err
	}
	return store.Put(ctx, key, bytes.NewReader(data), int64(len(data)))
}

// Key layout. Everything of one partition lives under its prefix:
//
//	v1/<topic>-<topic-id hex>/<partition>/manifest
//	v1/<topic>-<topic-id hex>/<partition>/<base offset, 20 digits>-<upload id>.log
//	                                          … .index, .timeindex, and .txnindex if any
const (
	keyRoot        = "v1/"
	manifestName   = "manifest"
	SuffixLog      = ".log"
	SuffixIndex    = ".index"
	SuffixTimeIdx  = ".timeindex"
	SuffixTxnIdx   = ".txnindex"
	segmentDigits  = 20
	uploadIDDigits = 16
)

// TopicPrefix is the key prefix of every object of one topic incarnation.
func TopicPrefix(topic, topicID string) string {
	return keyRoot + topic + "-" + topicID + "/"
}

// PartitionPrefix is the key prefix of one partition's objects.
func PartitionPrefix(topic, topicID string, partition int32) string {
	return TopicPrefix(topic, topicID) + strconv.Itoa(int(partition)) + "/"
}

// ManifestKey is where a partition's manifest lives.
func ManifestKey(partitionPrefix string) string { return partitionPrefix + manifestName }

// SegmentKey names one object of an uploaded segment; suffix is SuffixLog,
// SuffixIndex, SuffixTimeIdx or SuffixTxnIdx.
func SegmentKey(partitionPrefix string, base int64, uploadID, suffix string) string {
	return fmt.Sprintf("%s%0*d-%s%s", partitionPrefix, segmentDigits, base, uploadID, suffix)
}

// NewUploadID returns a fresh random upload ID. Each upload attempt uses a
// new one, so a retry or another writer never overwrites an object a reader
// may be using.
func NewUploadID() string {
	var b [uploadIDDigits / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("tiering: crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// TopicManifest names one partition manifest found by FindTopicManifests.
type TopicManifest struct {
	TopicID   string
	Partition int32
	Key       string
	ModTime   time.Time // when the manifest was last written
}

// FindTopicManifests lists the partition manifests stored for topic, over
// every incarnation (topic ID) of that name, ordered by topic ID and
// partition.
func FindTopicManifests(ctx context.Context, store ObjectStore, topic string) ([]TopicManifest, error) {
	prefix := keyRoot + topic + "-"
	objects, err := store.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	var found []TopicManifest
	for _, o := range objects {
		rest := strings.TrimPrefix(o.Key, prefix)
		// rest = <topic-id>/<partition>/manifest; a longer topic name that
		// shares the prefix ("a" and "a-b") fails the hex check.
		parts := strings.Split(rest, "/")
		if len(parts) != 3 || parts[2] != manifestName || !isHexID(parts[0], 32) {
			continue
		}
		p, err := strconv.ParseInt(parts[1], 10, 32)
		if err != nil || p < 0 || strconv.Itoa(int(p)) != parts[1] {
			continue
		}
		found = append(found, TopicManifest{TopicID: parts[0], Partition: int32(p), Key: o.Key, ModTime: o.ModTime})
	}
	return found, nil
}

func isHexID(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
