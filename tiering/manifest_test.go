package tiering

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func sampleManifest() *Manifest {
	return &Manifest{
		Version: ManifestVersion, Topic: "logs", TopicID: strings.Repeat("ab", 16),
		Partition: 1, Partitions: 3, Configs: map[string]string{"retention.ms": "-1"},
		LogStartOffset: 0,
		Segments: []RemoteSegment{
			{BaseOffset: 0, NextOffset: 100, Size: 4096, OffsetIndexSize: 8, MaxTimestamp: 5, UploadID: NewUploadID(),
				LeaderEpochs: []EpochStart{{Epoch: 0, StartOffset: 0}, {Epoch: 2, StartOffset: 50}}},
			{BaseOffset: 100, NextOffset: 250, Size: 8192, MaxTimestamp: 9, UploadID: NewUploadID()},
			{BaseOffset: 300, NextOffset: 301, Size: 70, MaxTimestamp: -1, UploadID: NewUploadID()},
		},
	}
}

func TestManifestRoundTrip(t *testing.T) {
	m := sampleManifest()
	data, err := EncodeManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := EncodeManifest(got)
	if string(again) != string(data) {
		t.Fatalf("round trip changed the manifest:\n%s\n%s", data, again)
	}
	if got.NextOffset() != 301 || got.StartOffset() != 0 || got.Bytes() != 4096+8192+70 {
		t.Fatalf("next %d start %d bytes %d", got.NextOffset(), got.StartOffset(), got.Bytes())
	}
}

func TestManifestFind(t *testing.T) {
	m := sampleManifest()
	m.LogStartOffset = 10
	for _, tc := range []struct {
		offset int64
		index  int
		ok     bool
	}{{0, 0, false}, {9, 0, false}, {10, 0, true}, {99, 0, true}, {100, 1, true}, {249, 1, true}, {250, 2, false}, {300, 2, true}, {301, 3, false}} {
		i, ok := m.Find(tc.offset)
		if ok != tc.ok || (ok && i != tc.index) || (!ok && tc.offset >= 250 && i != tc.index) {
			t.Errorf("Find(%d) = %d, %v; want %d, %v", tc.offset, i, ok, tc.index, tc.ok)
		}
	}
}

func TestManifestValidateRejects(t *testing.T) {
	for name, mutate := range map[string]func(*Manifest){
		"version":        func(m *Manifest) { m.Version = 2 },
		"topic id":       func(m *Manifest) { m.TopicID = "xyz" },
		"partition":      func(m *Manifest) { m.Partition = 3 },
		"overlap":        func(m *Manifest) { m.Segments[1].BaseOffset = 99 },
		"empty segment":  func(m *Manifest) { m.Segments[0].NextOffset = 0 },
		"size":           func(m *Manifest) { m.Segments[2].Size = 0 },
		"upload id":      func(m *Manifest) { m.Segments[0].UploadID = "../x" },
		"epoch order":    func(m *Manifest) { m.Segments[0].LeaderEpochs[1].Epoch = 0 },
		"epoch outside":  func(m *Manifest) { m.Segments[0].LeaderEpochs[1].StartOffset = 100 },
		"negative start": func(m *Manifest) { m.LogStartOffset = -1 },
		"slash in topic": func(m *Manifest) { m.Topic = "a/b" },
	} {
		m := sampleManifest()
		mutate(m)
		if _, err := EncodeManifest(m); !errors.Is(err, ErrInvalidManifest) {
			t.Errorf("%s: got %v, want ErrInvalidManifest", name, err)
		}
	}
	if _, err := DecodeManifest([]byte(`{"version":1} {}`)); !errors.Is(err, ErrInvalidManifest) {
		t.Errorf("trailing data: %v", err)
	}
}

func TestManifestStoreAndFind(t *testing.T) {
	ctx := context.Background()
	store := NewMemStore()
	m := sampleManifest()
	prefix := PartitionPrefix(m.Topic, m.TopicID, m.Partition)
	if err := SaveManifest(ctx, store, ManifestKey(prefix), m); err != nil {
		t.Fatal(err)
	}
	// Objects that are not manifests of "logs" must be ignored.
	other := sampleManifest()
	other.Topic = "logs-archive"
	_ = SaveManifest(ctx, store, ManifestKey(PartitionPrefix(other.Topic, other.TopicID, 0)), other)
	_ = store.Put(ctx, SegmentKey(prefix, 0, m.Segments[0].UploadID, SuffixLog), strings.NewReader("x"), 1)

	found, err := FindTopicManifests(ctx, store, "logs")
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].Partition != 1 || found[0].TopicID != m.TopicID {
		t.Fatalf("found %+v", found)
	}
	got, err := LoadManifest(ctx, store, found[0].Key)
	if err != nil || got.NextOffset() != 301 {
		t.Fatalf("load: %v %+v", err, got)
	}
	if _, err := LoadManifest(ctx, store, ManifestKey(PartitionPrefix("none", m.TopicID, 0))); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing manifest: %v", err)
	}
	if k := SegmentKey(prefix, 42, "0123456789abcdef", SuffixIndex); k != "v1/logs-"+m.TopicID+"/1/00000000000000000042-0123456789abcdef.index" {
		t.Fatalf("segment key %s", k)
	}
}

func FuzzDecodeManifest(f *testing.F) {
	data, _ := EncodeManifest(sampleManifest())
	f.Add(data)
	f.Add([]byte(`{"version":1,"segments":[{"base_offset":-1}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeManifest(b)
		if err != nil {
			return
		}
		again, err := EncodeManifest(m)
		if err != nil {
			t.Fatalf("a decoded manifest does not encode: %v", err)
		}
		if _, err := DecodeManifest(again); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		for _, s := range m.Segments {
			if i, ok := m.Find(s.BaseOffset); s.BaseOffset >= m.StartOffset() && (!ok || m.Segments[i].BaseOffset != s.BaseOffset) {
				t.Fatalf("Find(%d) misses its segment", s.BaseOffset)
			}
		}
	})
}
