package iceberg_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/strata-streaming/strata/tiering"
	. "github.com/strata-streaming/strata/tiering/iceberg"
	"github.com/strata-streaming/strata/tiering/iceberg/icebergtest"
)

var errCrashed = errors.New("crashed")

// crashingStore is a writer's store that dies after its first writes
// puts (Put or PutIfAbsent) succeed: every later write fails, as nothing
// more reaches the bucket from a process killed with SIGKILL. Reads go on,
// so the dying writer's own retries fail too.
type crashingStore struct {
	tiering.ObjectStore
	writes int // left before the crash
	keys   []string
}

func (s *crashingStore) take(key string) error {
	if s.writes <= 0 {
		return errCrashed
	}
	s.writes--
	s.keys = append(s.keys, key)
	return nil
}

func (s *crashingStore) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := s.take(key); err != nil {
		return err
	}
	return s.ObjectStore.Put(ctx, key, r, size)
}

func (s *crashingStore) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := s.take(key); err != nil {
		return err
	}
	return s.ObjectStore.(tiering.ConditionalPutter).PutIfAbsent(ctx, key, r, size)
}

// TestCrashAtEveryWriteOfACommitLosesAndDuplicatesNothing: a writer dies
// after each possible number of writes of an append (data files, manifest,
// manifest list, metadata version, hint); a new writer (the restarted node
// or the next leader) then appends from the table's offsets, as the
// broker does: the table holds every record exactly once, whatever the
// crash left behind, and the dead writer's orphans are referenced by no
// snapshot.
func TestCrashAtEveryWriteOfACommitLosesAndDuplicatesNothing(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	// Two hours of partition 0 and one of partition 1: three data files.
	first := append(incompressibleRecords(0, 0, 9, start, 64), incompressibleRecords(1, 0, 4, start, 64)...)
	second := append(incompressibleRecords(0, 10, 19, start.Add(time.Hour), 64), incompressibleRecords(1, 5, 9, start, 64)...)
	all := append(append([]Record(nil), first...), second...)

	// How many writes does the second commit make?
	probe, probeStore, _ := configuredTable(t, Config{})
	if _, err := probe.Append(ctx, first, nil); err != nil {
		t.Fatal(err)
	}
	counting := &crashingStore{ObjectStore: probeStore, writes: 1 << 30}
	counter, err := Open(Config{Store: counting, Prefix: tablePrefix, Location: probe.Location()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := counter.Append(ctx, second, nil); err != nil {
		t.Fatal(err)
	}
	steps := len(counting.keys)
	if steps < 5 {
		t.Fatalf("a commit made %d writes (%v); want data files, manifest, list, metadata and hint", steps, counting.keys)
	}

	for crashAt := range steps {
		t.Run(fmt.Sprintf("after_%d_writes", crashAt), func(t *testing.T) {
			tbl, store, _ := configuredTable(t, Config{})
			if _, err := tbl.Append(ctx, first, nil); err != nil {
				t.Fatal(err)
			}
			dying := &crashingStore{ObjectStore: store, writes: crashAt}
			victim, err := Open(Config{Store: dying, Prefix: tablePrefix, Location: tbl.Location()})
			if err != nil {
				t.Fatal(err)
			}
			_, appendErr := victim.Append(ctx, second, nil)
			if appendErr != nil && !errors.Is(appendErr, errCrashed) {
				t.Fatalf("the dying writer's append returned %v, want the crash", appendErr)
			}
			// The restarted writer resumes from the table's offsets, as
			// commitPartitions does: what the table holds is dropped.
			heir, err := Open(Config{Store: store, Prefix: tablePrefix, Location: tbl.Location()})
			if err != nil {
				t.Fatal(err)
			}
			st, err := heir.Load(ctx)
			if err != nil {
				t.Fatalf("load after a crash after %d writes (%v): %v", crashAt, dying.keys, err)
			}
			// The commit happened if its metadata version did (the hint
			// may lag: Load looks past it).
			committed := false
			for _, k := range dying.keys {
				committed = committed || strings.HasSuffix(k, ".metadata.json")
			}
			if appendErr == nil && !committed {
				t.Fatalf("the append reported success without writing its metadata (%v)", dying.keys)
			}
			wantLast := map[int32]int64{0: 9, 1: 4}
			if committed {
				wantLast = map[int32]int64{0: 19, 1: 9}
			}
			if fmt.Sprint(st.LastOffsets) != fmt.Sprint(wantLast) {
				t.Fatalf("offsets after a crash after %d writes (%v): %v, want %v", crashAt, dying.keys, st.LastOffsets, wantLast)
			}
			if _, err := heir.Append(ctx, all, nil); err != nil {
				t.Fatal(err)
			}
			want := rowNames(all)
			if got := icebergtest.Rows(t, heir); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("after a crash after %d writes (%v) and a new append:\n got %v\nwant %v", crashAt, dying.keys, got, want)
			}
			if committed {
				return
			}
			// A commit that did not happen left orphans only: its data
			// files are in no snapshot.
			for _, f := range icebergtest.DataFiles(t, heir) {
				for _, k := range dying.keys {
					if strings.HasSuffix(f, k) {
						t.Fatalf("the crashed commit's %s is referenced by the table", k)
					}
				}
			}
		})
	}
}
