package streams

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/brokertest"
)

func openTestStore(tb testing.TB, dir string) (*store, *pebble.Cache) {
	tb.Helper()
	cache := pebble.NewCache(64 << 20)
	st, err := openStore(&storeSpec{name: "s", changelog: "app-s-changelog"}, 0, dir, nil, cache, slog.New(slog.DiscardHandler))
	if err != nil {
		tb.Fatal(err)
	}
	return st, cache
}

// TestStoreKeepsOnlyCommittedWrites: aborted and failed-record writes
// vanish; committed ones survive a reopen with their changelog offset and
// stream time.
func TestStoreKeepsOnlyCommittedWrites(t *testing.T) {
	dir := t.TempDir()
	st, cache := openTestStore(t, dir)
	var c procCtx
	put := func(k, v string) {
		st.put(&c, []byte(k), []byte(v), time.UnixMilli(5))
		st.applyStaged()
	}
	put("a", "1")
	st.abort()
	if _, ok, _ := st.get([]byte("a")); ok {
		t.Fatal("aborted write still visible")
	}
	st.put(&c, []byte("failed"), []byte("x"), time.UnixMilli(5))
	if v, ok, _ := st.get([]byte("failed")); !ok || string(v) != "x" {
		t.Fatal("a record does not see its own staged write")
	}
	st.staged = st.staged[:0] // the record failed
	put("b", "2")
	st.streamTime = 77
	if err := st.commit(42); err != nil {
		t.Fatal(err)
	}
	if n := len(c.out); n != 3 || c.out[2].Topic != "app-s-changelog" {
		t.Fatalf("changelog records %d, want one per put", n)
	}
	if err := st.close(); err != nil {
		t.Fatal(err)
	}
	cache.Unref()
	st, cache = openTestStore(t, dir)
	defer cache.Unref()
	defer st.close()
	if v, ok, err := st.get([]byte("b")); err != nil || !ok || string(v) != "2" {
		t.Fatalf("b = %q %v %v after reopen", v, ok, err)
	}
	for _, k := range []string{"a", "failed"} {
		if _, ok, _ := st.get([]byte(k)); ok {
			t.Errorf("%s survived", k)
		}
	}
	if st.nextOffset != 42 || st.streamTime != 77 {
		t.Fatalf("reopened at offset %d, stream time %d; want 42, 77", st.nextOffset, st.streamTime)
	}
}

const benchKeys = 100_000

func benchKey(i int) []byte { return fmt.Appendf(nil, "user-%06d", i%benchKeys) }

// BenchmarkStoreWrite: read-modify-write of an 8-byte counter per key
// (what a count does) over 100k keys, which the store's cache holds,
// committed every 10k records.
func BenchmarkStoreWrite(b *testing.B) {
	st, cache := openTestStore(b, b.TempDir())
	defer cache.Unref()
	defer st.close()
	var c procCtx
	b.SetBytes(int64(len(benchKey(0)) + 8))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := benchKey(i * 7919)
		old, _, err := st.get(k)
		if err != nil {
			b.Fatal(err)
		}
		var n uint64
		if len(old) == 8 {
			n = binary.BigEndian.Uint64(old)
		}
		st.put(&c, k, binary.BigEndian.AppendUint64(nil, n+1), time.UnixMilli(int64(i)))
		st.applyStaged()
		c.out = c.out[:0]
		if i%10_000 == 9_999 {
			if err := st.commit(int64(i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
}

// BenchmarkStoreRead: random point reads of 1M committed keys, more than
// the store's cache holds, so most reads go to pebble.
func BenchmarkStoreRead(b *testing.B) {
	st, cache := openTestStore(b, b.TempDir())
	defer cache.Unref()
	defer st.close()
	var c procCtx
	const keys = 1_000_000
	key := func(i int) []byte { return fmt.Appendf(nil, "user-%07d", i) }
	for i := 0; i < keys; i++ {
		st.put(&c, key(i), binary.BigEndian.AppendUint64(nil, uint64(i)), time.UnixMilli(0))
		c.out = c.out[:0]
		st.applyStaged()
		if i%100_000 == 99_999 {
			if err := st.commit(int64(i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.SetBytes(int64(len(key(0)) + 8))
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok, err := st.get(key(rng.IntN(keys))); err != nil || !ok {
			b.Fatal("missing key", err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reads/s")
}

// BenchmarkStoreRestore: replaying a 500k-record changelog partition (16-byte
// keys, 100-byte values) from a real broker into an empty store.
func BenchmarkStoreRestore(b *testing.B) {
	broker := brokertest.Start(b)
	const n, valueSize = 500_000, 100
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker.Addr), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	compact := "compact"
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": &compact}, "app-s-changelog"); err != nil {
		b.Fatal(err)
	}
	value := make([]byte, valueSize)
	for i := 0; i < n; i++ {
		cl.Produce(ctx, &kgo.Record{Topic: "app-s-changelog", Key: fmt.Appendf(nil, "key-%012d", i), Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				b.Error(err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	app := &App{cfg: config{brokers: []string{broker.Addr}, appID: "app", logger: slog.New(slog.DiscardHandler)}}
	b.SetBytes(n * (16 + valueSize))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		st, cache := openTestStore(b, b.TempDir())
		rest := &restorer{app: app}
		b.StartTimer()
		err := rest.restore(ctx, []*store{st})
		b.StopTimer()
		rest.close()
		if err == nil && st.nextOffset != n {
			err = fmt.Errorf("restored up to offset %d, want %d", st.nextOffset, n)
		}
		st.close()
		cache.Unref()
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// TestStoreScanMergesUncommitted: a scan merges committed entries with
// uncommitted writes in key order; an uncommitted delete hides an entry.
func TestStoreScanMergesUncommitted(t *testing.T) {
	st, cache := openTestStore(t, t.TempDir())
	defer cache.Unref()
	defer st.close()
	var c procCtx
	put := func(k string, v []byte) {
		st.put(&c, []byte(k), v, time.UnixMilli(0))
		st.applyStaged()
	}
	for _, k := range []string{"d", "b", "a", "c"} {
		put(k, []byte("old-"+k))
	}
	if err := st.commit(4); err != nil {
		t.Fatal(err)
	}
	put("bb", []byte("new-bb"))
	put("c", nil)
	put("a", []byte("new-a"))
	var got []string
	err := st.scan([]byte("a"), []byte("d"), func(k, v []byte) (bool, error) {
		got = append(got, string(k)+"="+string(v))
		return true, nil
	})
	if want := []string{"a=new-a", "b=old-b", "bb=new-bb"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("scan = %v %v, want %v", got, err, want)
	}
}
