// Package storetest is the contract every tiering.ObjectStore must meet,
// written once and run against each implementation (memory, filesystem,
// S3 on a real MinIO), as STYLE.md #3 asks.
//
// An implementation's test calls Run with a Harness: a constructor that
// hands each subtest a fresh, empty store, and optionally an Inspector that
// reads what the store really wrote through a side door (the directory for
// files, a separate S3 client for S3), so a store cannot pass by agreeing
// with itself.
//
// What the suite pins down, beyond the method comments of ObjectStore:
//   - Put then Get returns the same bytes for 0 bytes, small, 1 MiB and a
//     large object (40 MiB by default: multipart on S3) written from a
//     reader that cannot seek.
//   - GetRange(offset, length): offset < 0, length <= 0 or offset >= size
//     (any range of an empty object) is ErrInvalidRange; a range running
//     past the end is a short read up to the end.
//   - List takes a plain string prefix, is complete beyond one S3 page
//     (1100 keys), sorted, and never shows a deleted or half-written object.
//   - Delete is idempotent; overwrite replaces content, size and ETag.
//   - A failed Put (size mismatch, cancelled context) leaves the previous
//     object, or none, and no debris.
//   - A cancelled or expired context fails every method with an error that
//     wraps context.Canceled / context.DeadlineExceeded, and fails reads of
//     a reader already open.
//   - Concurrent Puts of distinct keys all land; concurrent overwrites of
//     one key leave exactly one writer's bytes.
package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-streaming/strata/tiering"
)

// Harness describes one implementation to the suite.
type Harness struct {
	// New returns an empty store for one subtest (register clean-up with
	// t.Cleanup) and an Inspector for it, or nil if the store has no side
	// door to check through.
	New func(t *testing.T) (tiering.ObjectStore, Inspector)
	// LargeSize is the size of the large-object test; 0 means 40 MiB.
	LargeSize int64
	// PartSize is the store's multipart part size, used to place ranged
	// reads and failures across a part boundary; 0 means 1 MiB.
	PartSize int64
	// ManyKeys is how many objects the listing test writes; 0 means 1100,
	// more than one S3 list page of 1000.
	ManyKeys int
}

// Inspector reads a store's real contents without going through it. Keys
// and data are as the store's caller sees them (without any S3 prefix).
type Inspector interface {
	// Keys lists the stored object keys starting with prefix, sorted.
	Keys(t testing.TB, prefix string) []string
	// Read returns an object's bytes, or ok=false if there is none.
	Read(t testing.TB, key string) (data []byte, ok bool)
}

// UploadInspector is an Inspector that can also see unfinished multipart
// uploads (S3): after a failed Put there must be none.
type UploadInspector interface {
	Inspector
	IncompleteUploads(t testing.TB) []string
}

// Run runs the whole contract as parallel subtests of t.
func Run(t *testing.T, h Harness) {
	if h.LargeSize == 0 {
		h.LargeSize = 40 << 20
	}
	if h.PartSize == 0 {
		h.PartSize = 1 << 20
	}
	if h.ManyKeys == 0 {
		h.ManyKeys = 1100
	}
	tests := []struct {
		name string
		run  func(t *testing.T, h Harness)
	}{
		{"RoundTrip", testRoundTrip},
		{"GetRange", testGetRange},
		{"Head", testHead},
		{"ListPrefixes", testListPrefixes},
		{"ListManyPages", testListManyPages},
		{"Delete", testDelete},
		{"Overwrite", testOverwrite},
		{"LargeObject", testLargeObject},
		{"ConcurrentPuts", testConcurrentPuts},
		{"ContextCancelled", testContextCancelled},
		{"CancelDuringPut", testCancelDuringPut},
		{"NotFound", testNotFound},
		{"InvalidKeys", testInvalidKeys},
		{"SizeMismatch", testSizeMismatch},
		{"PutIfAbsent", testPutIfAbsent},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			test.run(t, h)
		})
	}
}

// payload returns n deterministic pseudo-random bytes named by seed.
func payload(seed string, n int64) []byte {
	data := make([]byte, n)
	generator(seed).Read(data)
	return data
}

// payloadReader streams the same bytes as payload without holding them,
// and cannot seek, as a segment upload from a pipe could not.
func payloadReader(seed string, n int64) io.Reader {
	return io.LimitReader(generator(seed), n)
}

func generator(seed string) *rand.ChaCha8 {
	return rand.NewChaCha8(sha256.Sum256([]byte(seed)))
}

func digest(r io.Reader) ([32]byte, int64, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, n, err
}

func put(t testing.TB, store tiering.ObjectStore, key string, data []byte) {
	t.Helper()
	if err := store.Put(context.Background(), key, bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatalf("Put(%q, %d bytes): %v", key, len(data), err)
	}
}

func get(t testing.TB, store tiering.ObjectStore, key string) []byte {
	t.Helper()
	rc, err := store.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("Get(%q): reading: %v", key, err)
	}
	return data
}

func getRange(store tiering.ObjectStore, key string, offset, length int64) ([]byte, error) {
	rc, err := store.GetRange(context.Background(), key, offset, length)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

func keysOf(infos []tiering.ObjectInfo) []string {
	keys := make([]string, len(infos))
	for i, info := range infos {
		keys[i] = info.Key
	}
	return keys
}

func list(t testing.TB, store tiering.ObjectStore, prefix string) []tiering.ObjectInfo {
	t.Helper()
	infos, err := store.List(context.Background(), prefix)
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	if !slices.IsSortedFunc(infos, func(a, b tiering.ObjectInfo) int { return strings.Compare(a.Key, b.Key) }) {
		t.Errorf("List(%q) is not sorted by key: %q", prefix, keysOf(infos))
	}
	return infos
}

func wantErr(t testing.TB, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error %v, want one wrapping %v", what, err, target)
	}
}

// checkRaw verifies through the inspector that key holds exactly want
// (nil: no object).
func checkRaw(t testing.TB, inspector Inspector, key string, want []byte) {
	t.Helper()
	if inspector == nil {
		return
	}
	data, ok := inspector.Read(t, key)
	switch {
	case want == nil && ok:
		t.Errorf("inspector: %q holds %d bytes, want no object", key, len(data))
	case want != nil && !ok:
		t.Errorf("inspector: %q is missing, want %d bytes", key, len(want))
	case want != nil && !bytes.Equal(data, want):
		t.Errorf("inspector: %q holds %d bytes that differ from the %d put", key, len(data), len(want))
	}
}

func checkNoUploads(t testing.TB, inspector Inspector) {
	t.Helper()
	if uploads, ok := inspector.(UploadInspector); ok {
		if pending := uploads.IncompleteUploads(t); len(pending) > 0 {
			t.Errorf("inspector: incomplete multipart uploads left behind: %q", pending)
		}
	}
}

func testRoundTrip(t *testing.T, h Harness) {
	store, inspector := h.New(t)
	for _, size := range []int64{0, 1, 4096, 1 << 20} {
		key := fmt.Sprintf("roundtrip/object-%d", size)
		data := payload(key, size)
		put(t, store, key, data)
		if got := get(t, store, key); !bytes.Equal(got, data) {
			t.Errorf("Get(%q): %d bytes that differ from the %d put", key, len(got), len(data))
		}
		checkRaw(t, inspector, key, data)
	}
	// A key with characters that need escaping in URLs and paths.
	key := "roundtrip/odd name+%?#=&ä/x.y-z_~"
	data := []byte("odd")
	put(t, store, key, data)
	if got := get(t, store, key); !bytes.Equal(got, data) {
		t.Errorf("Get(%q) = %q, want %q", key, got, data)
	}
	checkRaw(t, inspector, key, data)
}

func testGetRange(t *testing.T, h Harness) {
	store, _ := h.New(t)
	const size = 10000
	data := payload("range", size)
	put(t, store, "range/object", data)
	for _, c := range []struct {
		offset, length int64
		want           []byte // nil: ErrInvalidRange
	}{
		{0, 100, data[:100]},
		{0, size, data},
		{5000, 1000, data[5000:6000]},
		{size - 100, 100, data[size-100:]},
		{size - 1, 1, data[size-1:]},
		{9950, 100, data[9950:]},           // past the end: short read
		{0, size * 10, data},               // longer than the object
		{1, 1 << 62, data[1:]},             // absurdly long
		{size, 1, nil},                     // at the end
		{size + 5000, 10, nil},             // beyond the end
		{-1, 10, nil},                      // negative offset
		{0, 0, nil},                        // empty range
		{10, -1, nil},                      // negative length
		{size / 2, 0, nil},                 // empty range in the middle
		{1<<62 + 12345, 100, nil},          // far beyond
		{size - 1, 1 << 62, data[size-1:]}, // last byte, long length
	} {
		got, err := getRange(store, "range/object", c.offset, c.length)
		what := fmt.Sprintf("GetRange(offset %d, length %d)", c.offset, c.length)
		if c.want == nil {
			wantErr(t, what, err, tiering.ErrInvalidRange)
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", what, err)
		} else if !bytes.Equal(got, c.want) {
			t.Errorf("%s: %d bytes, want %d (content differs: %v)", what, len(got), len(c.want), len(got) == len(c.want))
		}
	}

	put(t, store, "range/empty", nil)
	_, err := getRange(store, "range/empty", 0, 1)
	wantErr(t, "GetRange of an empty object", err, tiering.ErrInvalidRange)
	_, err = getRange(store, "range/missing", 0, 1)
	wantErr(t, "GetRange of a missing key", err, tiering.ErrNotFound)
}

func testHead(t *testing.T, h Harness) {
	store, _ := h.New(t)
	before := time.Now()
	data := payload("head", 12345)
	put(t, store, "head/object", data)
	after := time.Now()
	info, err := store.Head(context.Background(), "head/object")
	if err != nil {
		t.Fatalf("Head: %v", err)
	}
	if info.Key != "head/object" || info.Size != int64(len(data)) || info.ETag == "" {
		t.Errorf("Head = %+v, want key head/object, size %d and an ETag", info, len(data))
	}
	// S3 keeps whole seconds; allow for that and for a little clock skew.
	if info.ModTime.Before(before.Add(-time.Minute)) || info.ModTime.After(after.Add(time.Minute)) {
		t.Errorf("Head ModTime %v is not near the Put (%v .. %v)", info.ModTime, before, after)
	}
	put(t, store, "head/empty", nil)
	if info, err := store.Head(context.Background(), "head/empty"); err != nil || info.Size != 0 {
		t.Errorf("Head(empty) = %+v, %v; want size 0", info, err)
	}
	listed := list(t, store, "head/object")
	if len(listed) != 1 || listed[0].Size != info.Size || listed[0].ETag == "" {
		t.Errorf("List(head/object) = %+v, want one entry of size %d with an ETag", listed, info.Size)
	}
}

func testListPrefixes(t *testing.T, h Harness) {
	store, inspector := h.New(t)
	keys := []string{"a/1", "a/2", "a/b/3", "a/b/c/4", "a-x", "a.y", "ab/5", "b/6", "bb"}
	for _, key := range keys {
		put(t, store, key, []byte(key))
	}
	for _, c := range []struct {
		prefix string
		want   []string
	}{
		{"", keys},
		{"a", []string{"a-x", "a.y", "a/1", "a/2", "a/b/3", "a/b/c/4", "ab/5"}},
		{"a/", []string{"a/1", "a/2", "a/b/3", "a/b/c/4"}},
		{"a/b", []string{"a/b/3", "a/b/c/4"}},
		{"a/b/", []string{"a/b/3", "a/b/c/4"}},
		{"a/b/c/4", []string{"a/b/c/4"}},
		{"a/b/c/4/", nil},
		{"b", []string{"b/6", "bb"}},
		{"zzz", nil},
		{"zzz/", nil},
		{"a/1/x/", nil}, // through an object as if it were a directory
	} {
		want := slices.Clone(c.want)
		slices.Sort(want)
		infos := list(t, store, c.prefix)
		if got := keysOf(infos); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("List(%q) = %q, want %q", c.prefix, got, want)
		}
		for _, info := range infos {
			if info.Size != int64(len(info.Key)) {
				t.Errorf("List(%q): %q has size %d, want %d", c.prefix, info.Key, info.Size, len(info.Key))
			}
		}
		if inspector != nil {
			if raw := inspector.Keys(t, c.prefix); !slices.Equal(raw, want) && !(len(raw) == 0 && len(want) == 0) {
				t.Errorf("inspector Keys(%q) = %q, want %q", c.prefix, raw, want)
			}
		}
	}
	if infos, err := store.List(context.Background(), "zzz"); err != nil || infos == nil {
		t.Errorf("List with no match = %v, %v; want an empty, non-nil slice", infos, err)
	}
}

func testListManyPages(t *testing.T, h Harness) {
	store, inspector := h.New(t)
	want := make([]string, h.ManyKeys)
	for i := range want {
		want[i] = fmt.Sprintf("many/key-%05d", i)
	}
	forEachParallel(t, 16, len(want), func(i int) error {
		data := []byte(want[i])
		return store.Put(context.Background(), want[i], bytes.NewReader(data), int64(len(data)))
	})
	put(t, store, "manyother", []byte("x")) // shares "many" but not "many/"
	if got := keysOf(list(t, store, "many/")); !slices.Equal(got, want) {
		t.Errorf("List(many/) returned %d keys, want %d (first %q, last %q)", len(got), len(want), first(got), last(got))
	}
	// A prefix that selects the first 1000 keys out of the pages.
	var under1000 []string
	for _, key := range want {
		if strings.HasPrefix(key, "many/key-00") {
			under1000 = append(under1000, key)
		}
	}
	if got := keysOf(list(t, store, "many/key-00")); !slices.Equal(got, under1000) {
		t.Errorf("List(many/key-00) returned %d keys, want %d", len(got), len(under1000))
	}
	if got := keysOf(list(t, store, "")); len(got) != len(want)+1 {
		t.Errorf("List(\"\") returned %d keys, want %d", len(got), len(want)+1)
	}
	if inspector != nil {
		if raw := inspector.Keys(t, "many/"); !slices.Equal(raw, want) {
			t.Errorf("inspector Keys(many/) = %d keys, want %d", len(raw), len(want))
		}
	}
}

func first(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	return keys[0]
}

func last(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	return keys[len(keys)-1]
}

// forEachParallel runs fn(0..n-1) on workers goroutines and fails t with
// the first error.
func forEachParallel(t testing.TB, workers, n int, fn func(i int) error) {
	t.Helper()
	next := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func testDelete(t *testing.T, h Harness) {
	store, inspector := h.New(t)
	ctx := context.Background()
	put(t, store, "del/a/object", []byte("doomed"))
	put(t, store, "del/b/keep", []byte("kept"))
	if err := store.Delete(ctx, "del/a/object"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	_, err := store.Get(ctx, "del/a/object")
	wantErr(t, "Get after Delete", err, tiering.ErrNotFound)
	_, err = store.Head(ctx, "del/a/object")
	wantErr(t, "Head after Delete", err, tiering.ErrNotFound)
	if err := store.Delete(ctx, "del/a/object"); err != nil {
		t.Errorf("Delete again: %v, want nil (idempotent)", err)
	}
	if err := store.Delete(ctx, "del/never/existed"); err != nil {
		t.Errorf("Delete of a key never written: %v, want nil", err)
	}
	if got := keysOf(list(t, store, "del/")); !slices.Equal(got, []string{"del/b/keep"}) {
		t.Errorf("List after Delete = %q, want [del/b/keep]", got)
	}
	checkRaw(t, inspector, "del/a/object", nil)
	checkRaw(t, inspector, "del/b/keep", []byte("kept"))
	// The key can be written again.
	put(t, store, "del/a/object", []byte("back"))
	if got := get(t, store, "del/a/object"); string(got) != "back" {
		t.Errorf("Get after re-Put = %q, want back", got)
	}
}

func testOverwrite(t *testing.T, h Harness) {
	store, inspector := h.New(t)
	ctx := context.Background()
	v1, v2, v3 := payload("v1", 3000), payload("v2", 1000), payload("v3", 1000)
	put(t, store, "over/object", v1)
	info1, err := store.Head(ctx, "over/object")
	if err != nil {
		t.Fatal(err)
	}
	put(t, store, "over/object", v2)
	if got := get(t, store, "over/object"); !bytes.Equal(got, v2) {
		t.Errorf("Get after overwrite: %d bytes, want the %d of the second Put", len(got), len(v2))
	}
	info2, err := store.Head(ctx, "over/object")
	if err != nil {
		t.Fatal(err)
	}
	if info2.Size != int64(len(v2)) || info2.ETag == info1.ETag {
		t.Errorf("Head after overwrite = %+v (before %+v): want size %d and a new ETag", info2, info1, len(v2))
	}
	// Same size, different bytes, at once: the ETag still changes.
	put(t, store, "over/object", v3)
	info3, err := store.Head(ctx, "over/object")
	if err != nil {
		t.Fatal(err)
	}
	if info3.ETag == info2.ETag {
		t.Errorf("ETag %q unchanged by an overwrite with other bytes of the same size", info3.ETag)
	}
	checkRaw(t, inspector, "over/object", v3)
	if got := keysOf(list(t, store, "over/")); !slices.Equal(got, []string{"over/object"}) {
		t.Errorf("List after overwrites = %q, want one key", got)
	}
}

func testLargeObject(t *testing.T, h Harness) {
	store, inspector := h.New(t)
	ctx := context.Background()
	const key = "large/object"
	if err := store.Put(ctx, key, payloadReader(key, h.LargeSize), h.LargeSize); err != nil {
		t.Fatalf("Put of %d bytes: %v", h.LargeSize, err)
	}
	want, _, _ := digest(payloadReader(key, h.LargeSize))
	rc, err := store.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	got, n, err := digest(rc)
	rc.Close()
	if err != nil || n != h.LargeSize || got != want {
		t.Errorf("Get: %d bytes (err %v), want %d; sha256 equal: %v", n, err, h.LargeSize, got == want)
	}
	info, err := store.Head(ctx, key)
	if err != nil || info.Size != h.LargeSize {
		t.Errorf("Head = %+v, %v; want size %d", info, err, h.LargeSize)
	}
	// Ranges across the first part boundary and at the very end.
	full := payload(key, h.LargeSize)
	for _, r := range [][2]int64{{h.PartSize - 10, 20}, {h.PartSize, 1}, {h.LargeSize - 7, 100}} {
		data, err := getRange(store, key, r[0], r[1])
		end := min(r[0]+r[1], h.LargeSize)
		if err != nil || !bytes.Equal(data, full[r[0]:end]) {
			t.Errorf("GetRange(%d, %d): %d bytes, err %v; want %d matching bytes", r[0], r[1], len(data), err, end-r[0])
		}
	}
	checkRaw(t, inspector, key, full)
	checkNoUploads(t, inspector)
}

func testConcurrentPuts(t *testing.T, h Harness) {
	store, inspector := h.New(t)
	const distinct, writers = 32, 8
	var wg sync.WaitGroup
	errs := make(chan error, distinct+writers)
	for i := range distinct {
		wg.Go(func() {
			key := fmt.Sprintf("conc/distinct-%02d", i)
			data := payload(key, 64<<10)
			errs <- store.Put(context.Background(), key, bytes.NewReader(data), int64(len(data)))
		})
	}
	versions := make([][]byte, writers)
	for i := range writers {
		versions[i] = payload(fmt.Sprintf("shared-%d", i), 256<<10)
	}
	for i := range writers {
		wg.Go(func() {
			errs <- store.Put(context.Background(), "conc/shared", bytes.NewReader(versions[i]), int64(len(versions[i])))
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent Put: %v", err)
		}
	}
	for i := range distinct {
		key := fmt.Sprintf("conc/distinct-%02d", i)
		if got := get(t, store, key); !bytes.Equal(got, payload(key, 64<<10)) {
			t.Errorf("Get(%q) differs from what was put", key)
		}
	}
	shared := get(t, store, "conc/shared")
	if !slices.ContainsFunc(versions, func(v []byte) bool { return bytes.Equal(v, shared) }) {
		t.Errorf("conc/shared (%d bytes) is none of the %d versions written: a torn write", len(shared), writers)
	}
	checkRaw(t, inspector, "conc/shared", shared)
	if got := list(t, store, "conc/"); len(got) != distinct+1 {
		t.Errorf("List(conc/) = %d keys, want %d", len(got), distinct+1)
	}
}

func testContextCancelled(t *testing.T, h Harness) {
	store, _ := h.New(t)
	put(t, store, "ctx/object", payload("ctx", 1<<20))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelExpired()
	for _, c := range []struct {
		ctx  context.Context
		want error
	}{{cancelled, context.Canceled}, {expired, context.DeadlineExceeded}} {
		ctx := c.ctx
		err := store.Put(ctx, "ctx/new", strings.NewReader("x"), 1)
		wantErr(t, "Put", err, c.want)
		_, err = store.Get(ctx, "ctx/object")
		wantErr(t, "Get", err, c.want)
		_, err = store.GetRange(ctx, "ctx/object", 0, 10)
		wantErr(t, "GetRange", err, c.want)
		_, err = store.Head(ctx, "ctx/object")
		wantErr(t, "Head", err, c.want)
		_, err = store.List(ctx, "ctx/")
		wantErr(t, "List", err, c.want)
		err = store.Delete(ctx, "ctx/object")
		wantErr(t, "Delete", err, c.want)
	}
	if _, err := store.Head(context.Background(), "ctx/new"); !errors.Is(err, tiering.ErrNotFound) {
		t.Errorf("Head(ctx/new) after cancelled Put: %v, want ErrNotFound", err)
	}
	if got := get(t, store, "ctx/object"); len(got) != 1<<20 {
		t.Errorf("ctx/object has %d bytes after a cancelled Delete, want %d", len(got), 1<<20)
	}

	// Cancelling while a reader is open fails the reads that follow.
	for _, open := range []func(context.Context) (io.ReadCloser, error){
		func(ctx context.Context) (io.ReadCloser, error) { return store.Get(ctx, "ctx/object") },
		func(ctx context.Context) (io.ReadCloser, error) { return store.GetRange(ctx, "ctx/object", 10, 1<<19) },
	} {
		ctx, cancel := context.WithCancel(context.Background())
		rc, err := open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(rc, make([]byte, 1)); err != nil {
			t.Fatalf("first read: %v", err)
		}
		cancel()
		if _, err := io.ReadAll(rc); err == nil {
			t.Errorf("reading on after cancel succeeded; want an error")
		}
		rc.Close()
	}
}

// cancellingReader yields n bytes of payload and cancels ctx after the
// first after bytes.
type cancellingReader struct {
	r      io.Reader
	read   int64
	after  int64
	cancel context.CancelFunc
}

func (c *cancellingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += int64(n)
	if c.read >= c.after {
		c.cancel()
	}
	return n, err
}

func testCancelDuringPut(t *testing.T, h Harness) {
	store, inspector := h.New(t)
	for _, c := range []struct {
		key          string
		size, cancel int64
	}{
		{"cancel/small", 64 << 10, 1 << 10},
		{"cancel/large", 3 * h.PartSize, h.PartSize + h.PartSize/2},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		reader := &cancellingReader{r: payloadReader(c.key, c.size), after: c.cancel, cancel: cancel}
		err := store.Put(ctx, c.key, reader, c.size)
		cancel()
		wantErr(t, "Put cancelled by its reader ("+c.key+")", err, context.Canceled)
		if _, err := store.Head(context.Background(), c.key); !errors.Is(err, tiering.ErrNotFound) {
			t.Errorf("Head(%q) after a cancelled Put: %v, want ErrNotFound", c.key, err)
		}
		checkRaw(t, inspector, c.key, nil)
	}
	if got := list(t, store, ""); len(got) != 0 {
		t.Errorf("List after cancelled Puts = %q, want nothing", keysOf(got))
	}
	if inspector != nil {
		if raw := inspector.Keys(t, ""); len(raw) != 0 {
			t.Errorf("inspector after cancelled Puts: %q, want nothing", raw)
		}
	}
	checkNoUploads(t, inspector)
}

func testNotFound(t *testing.T, h Harness) {
	store, _ := h.New(t)
	ctx := context.Background()
	put(t, store, "nf/dir/object", []byte("x"))
	for _, key := range []string{"nf/missing", "nf/dir", "nf/dir/object/below", "missing"} {
		_, err := store.Get(ctx, key)
		wantErr(t, "Get("+key+")", err, tiering.ErrNotFound)
		if err != nil && !strings.Contains(err.Error(), key) {
			t.Errorf("Get(%q) error %q does not name the key", key, err)
		}
		_, err = store.GetRange(ctx, key, 0, 1)
		wantErr(t, "GetRange("+key+")", err, tiering.ErrNotFound)
		_, err = store.Head(ctx, key)
		wantErr(t, "Head("+key+")", err, tiering.ErrNotFound)
		if err := store.Delete(ctx, key); err != nil {
			t.Errorf("Delete(%q): %v, want nil", key, err)
		}
	}
	if got := get(t, store, "nf/dir/object"); string(got) != "x" {
		t.Errorf("nf/dir/object = %q after deletes of other keys, want x", got)
	}
}

func testInvalidKeys(t *testing.T, h Harness) {
	store, inspector := h.New(t)
	ctx := context.Background()
	for _, key := range []string{
		"", "/abs", "a/../b", "..", ".", "../escape", "a/..", "a//b", "a/", "./a", "a/./b",
		"nul\x00byte", `back\slash`, "\xff\xfe", strings.Repeat("k", tiering.MaxKeyLength+1),
		"a/.strata-tmp-123", strings.Repeat("s", tiering.MaxSegmentLength+1) + "/x",
	} {
		err := store.Put(ctx, key, strings.NewReader("x"), 1)
		wantErr(t, fmt.Sprintf("Put(%q)", key), err, tiering.ErrInvalidKey)
		_, err = store.Get(ctx, key)
		wantErr(t, fmt.Sprintf("Get(%q)", key), err, tiering.ErrInvalidKey)
		_, err = store.GetRange(ctx, key, 0, 1)
		wantErr(t, fmt.Sprintf("GetRange(%q)", key), err, tiering.ErrInvalidKey)
		_, err = store.Head(ctx, key)
		wantErr(t, fmt.Sprintf("Head(%q)", key), err, tiering.ErrInvalidKey)
		err = store.Delete(ctx, key)
		wantErr(t, fmt.Sprintf("Delete(%q)", key), err, tiering.ErrInvalidKey)
	}
	for _, prefix := range []string{"/abs", "../", "a/../", "a//", "nul\x00"} {
		_, err := store.List(ctx, prefix)
		wantErr(t, fmt.Sprintf("List(%q)", prefix), err, tiering.ErrInvalidKey)
	}
	// Keys that look odd but are fine.
	long := strings.Repeat(strings.Repeat("k", 220)+"/", 4) + "end" // 887 bytes in 255-byte segments
	for _, key := range []string{"a..b", "...", ".hidden", "a/.b/c", long} {
		put(t, store, key, []byte(key))
		if got := get(t, store, key); string(got) != key {
			t.Errorf("Get(%q) = %q", key, got)
		}
	}
	if inspector != nil {
		if raw := inspector.Keys(t, ""); len(raw) != 5 {
			t.Errorf("inspector sees %d objects, want the 5 valid ones: %q", len(raw), raw)
		}
	}
}

func testSizeMismatch(t *testing.T, h Harness) {
	store, inspector := h.New(t)
	ctx := context.Background()
	old := []byte("old content")
	put(t, store, "size/existing", old)
	for _, c := range []struct {
		name     string
		declared int64
		actual   int64
	}{
		{"short", 100, 50},
		{"long", 50, 100},
		{"empty declared", 0, 1},
		{"negative", -1, 0},
		{"short multipart", h.PartSize + 100, h.PartSize + 50},
		{"long multipart", h.PartSize + 100, h.PartSize + 101},
	} {
		for _, key := range []string{"size/new", "size/existing"} {
			err := store.Put(ctx, key, payloadReader(key, c.actual), c.declared)
			wantErr(t, fmt.Sprintf("Put(%q) %s", key, c.name), err, tiering.ErrSizeMismatch)
		}
	}
	if _, err := store.Head(ctx, "size/new"); !errors.Is(err, tiering.ErrNotFound) {
		t.Errorf("Head(size/new) after failed Puts: %v, want ErrNotFound", err)
	}
	if got := get(t, store, "size/existing"); !bytes.Equal(got, old) {
		t.Errorf("size/existing = %q after failed overwrites, want %q", got, old)
	}
	checkRaw(t, inspector, "size/new", nil)
	checkRaw(t, inspector, "size/existing", old)
	if inspector != nil {
		if raw := inspector.Keys(t, ""); !slices.Equal(raw, []string{"size/existing"}) {
			t.Errorf("inspector after failed Puts: %q, want only size/existing", raw)
		}
	}
	checkNoUploads(t, inspector)
}

// testPutIfAbsent: a store that is a tiering.ConditionalPutter creates a
// free key, refuses a taken one with ErrExists (keeping the object), and of
// racing writers of one key exactly one wins.
func testPutIfAbsent(t *testing.T, h Harness) {
	store, inspector := h.New(t)
	cp, ok := store.(tiering.ConditionalPutter)
	if !ok {
		t.Skip("the store has no PutIfAbsent")
	}
	ctx := context.Background()
	first, second := payload("first", 500), payload("second", 700)
	if err := cp.PutIfAbsent(ctx, "cas/v1", bytes.NewReader(first), int64(len(first))); err != nil {
		t.Fatalf("PutIfAbsent of a free key: %v", err)
	}
	if err := cp.PutIfAbsent(ctx, "cas/v1", bytes.NewReader(second), int64(len(second))); !errors.Is(err, tiering.ErrExists) {
		t.Fatalf("PutIfAbsent of a taken key: %v, want ErrExists", err)
	}
	if got := get(t, store, "cas/v1"); !bytes.Equal(got, first) {
		t.Fatalf("after a refused PutIfAbsent: %d bytes, want the first %d", len(got), len(first))
	}
	checkRaw(t, inspector, "cas/v1", first)
	const writers = 8
	var wg sync.WaitGroup
	results := make([]error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data := payload(fmt.Sprint("racer", i), 300)
			results[i] = cp.PutIfAbsent(ctx, "cas/v2", bytes.NewReader(data), int64(len(data)))
		}()
	}
	wg.Wait()
	wins := 0
	for i, err := range results {
		switch {
		case err == nil:
			wins++
			if got := get(t, store, "cas/v2"); !bytes.Equal(got, payload(fmt.Sprint("racer", i), 300)) {
				t.Errorf("cas/v2 holds another writer's bytes than the winner's (%d)", i)
			}
		case !errors.Is(err, tiering.ErrExists):
			t.Errorf("racer %d: %v", i, err)
		}
	}
	if wins != 1 {
		t.Errorf("%d of %d racing PutIfAbsent calls won, want exactly 1", wins, writers)
	}
	if got := keysOf(list(t, store, "cas/")); !slices.Equal(got, []string{"cas/v1", "cas/v2"}) {
		t.Errorf("List after PutIfAbsent = %v (no temporary leftovers)", got)
	}
}
