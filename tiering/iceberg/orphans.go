package iceberg

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// RemoveOrphans deletes the table's data files, manifests and manifest
// lists that no snapshot of the current metadata references and that were
// last modified before olderThan: the files of snapshots SnapshotRetention
// expired (and of files a compaction replaced, once the snapshots that
// listed them expired), and those of commits that crashed or lost their
// race before their metadata landed. With MetadataDeleteAfterCommit it
// also deletes this writer's metadata versions before the current one's
// MetadataPreviousVersionsMax predecessors that are older than olderThan
// and MetadataMinAge: those a commit's own deletion left (a failed delete,
// a version too young then, a table that kept every version before). It
// returns how many files it deleted.
//
// olderThan is the safety margin: a running commit (here or on another
// node) writes its files before the metadata that references them, so it
// must be earlier than any commit can take, e.g. an hour ago. The store is
// listed before the metadata is read, so a file committed in between is
// seen as referenced. The hint and the versions kept are never deleted,
// nor another writer's metadata files.
func (t *Table) RemoveOrphans(ctx context.Context, olderThan time.Time) (int, error) {
	var candidates []string
	versions := map[int]time.Time{} // this writer's metadata versions, by N
	for _, dir := range []string{"/data/", "/metadata/"} {
		objects, err := t.cfg.Store.List(ctx, t.cfg.Prefix+dir)
		if err != nil {
			return 0, fmt.Errorf("iceberg: list %s: %w", t.cfg.Prefix+dir, err)
		}
		for _, o := range objects {
			if v, ok := t.versionOfKey(o.Key); ok {
				versions[v] = o.ModTime
			} else if ownFile(strings.TrimPrefix(o.Key, t.cfg.Prefix+dir), dir) && o.ModTime.Before(olderThan) {
				candidates = append(candidates, o.Key)
			}
		}
	}
	if len(candidates) == 0 && (!t.cfg.MetadataDeleteAfterCommit || len(versions) <= t.cfg.MetadataPreviousVersionsMax+1) {
		return 0, nil
	}
	st, err := t.Load(ctx)
	if err != nil {
		return 0, err
	}
	if st.Version == 0 {
		return 0, nil // no metadata: nothing is known to be unreferenced
	}
	referenced, err := t.referencedKeys(ctx, st)
	if err != nil {
		return 0, err
	}
	deleted := 0
	for _, key := range candidates {
		if referenced[key] {
			continue
		}
		if err := t.cfg.Store.Delete(ctx, key); err != nil {
			return deleted, fmt.Errorf("iceberg: delete orphan %s: %w", key, err)
		}
		deleted++
	}
	if !t.cfg.MetadataDeleteAfterCommit {
		return deleted, nil
	}
	// Old metadata versions (deleteOldVersions says why it is safe).
	young := time.Now().Add(-t.cfg.MetadataMinAge)
	var old []int
	for v, modTime := range versions {
		if v < st.Version-t.cfg.MetadataPreviousVersionsMax && modTime.Before(olderThan) && modTime.Before(young) {
			old = append(old, v)
		}
	}
	n, err := t.deleteVersions(ctx, old)
	return deleted + n, err
}

// ownFile reports whether rel, a key below the table's data/ or
// metadata/ directory, has the shape of a file this writer makes there:
// data/[<field>=<value>/]<file>.parquet, metadata/<file>.avro. The listing
// is recursive, so this keeps the files of another table whose location
// lies below this one (a user's iceberg.table.location may nest) out of
// reach.
func ownFile(rel, dir string) bool {
	if dir == "/metadata/" {
		return strings.HasSuffix(rel, ".avro") && !strings.Contains(rel, "/")
	}
	if !strings.HasSuffix(rel, ".parquet") {
		return false
	}
	part, file, nested := strings.Cut(rel, "/")
	return !nested || (strings.Contains(part, "=") && !strings.Contains(file, "/"))
}

// referencedKeys are the object keys of the manifest lists, manifests and
// live data files of every snapshot st holds. A file a manifest lists as
// DELETED is live in the snapshots before it, whose own manifests list it
// as ADDED or EXISTING while they are retained.
func (t *Table) referencedKeys(ctx context.Context, st State) (map[string]bool, error) {
	out := map[string]bool{}
	add := func(location string) error {
		key, err := t.keyOf(location)
		if err != nil {
			return err
		}
		out[key] = true
		return nil
	}
	for _, snap := range st.Metadata.Snapshots() {
		if err := add(snap.ManifestList); err != nil {
			return nil, err
		}
		manifests, err := t.readManifestList(ctx, &snap)
		if err != nil {
			return nil, err
		}
		for _, m := range manifests {
			key, err := t.keyOf(m.FilePath())
			if err != nil {
				return nil, err
			}
			if out[key] {
				continue // shared with a snapshot already read
			}
			out[key] = true
			entries, err := t.readLiveManifest(ctx, m)
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				if err := add(e.DataFile().FilePath()); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}
