package replica

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/strata-streaming/strata/broker/storage"
)

// Moving a replica's log to another directory of this node
// (AlterReplicaLogDirs) while it keeps serving:
//
//  1. Without a lock, the files of the log are copied to the future
//     directory, round after round: sealed segments once, the active
//     segment's new bytes each round (appends only add at its end), a
//     file replaced by compaction (a new inode) or any .log after a
//     truncation again whole, files gone removed. Rounds go on until one
//     copies less than moveTailBytes.
//  2. The old log is fsynced (still without a lock).
//  3. Under mu (appends, truncations and role changes wait): the old log
//     is closed (its checkpoint is the last write to it), the last tail
//     copied and fsynced, the future directory renamed to its final name,
//     the old one renamed to <name>.<id>-delete, and the log reopened
//     from the new directory (a clean checkpoint: no recovery scan). Only
//     this short tail copy, two renames and the open hold mu.
//  4. The old directory is deleted with no lock held.
//
// Readers holding the old log see storage.ErrClosed for the instant
// between the close and the swap; they read again from SettledLog, which
// waits for the swap to end.

// moveTailBytes ends the unlocked copy rounds: the last one under mu
// copies about this much at most (plus what producers append meanwhile).
const moveTailBytes = 1 << 20

// maxMoveRounds bounds the unlocked rounds when producers write faster
// than the copy goes.
const maxMoveRounds = 20

// ErrMoveInterrupted: the log was truncated or being truncated while the
// final swap wanted to run; the caller may retry the move.
var ErrMoveInterrupted = errors.New("replica: log truncated during a move between directories")

// MoveProgress is how far a move's copy has got.
type MoveProgress struct {
	Bytes int64 // bytes in the future directory
	// End is the offset up to which the copy holds the log (the base
	// offset after the last wholly copied segment).
	End int64
}

// MoveLog moves the log to dst (which must not exist) through the staging
// directory future, as described above, calling progress after each
// round. On an error before the swap the future directory is removed and
// the log stays where it was.
func (r *Replica) MoveLog(ctx context.Context, future, dst string, progress func(MoveProgress)) (err error) {
	if progress == nil {
		progress = func(MoveProgress) {}
	}
	src := r.storage().Dir()
	// A partition never written has no directory yet: make it, so that
	// the copy has partition.metadata and a source to list.
	if err := r.storage().EnsureDir(); err != nil {
		return err
	}
	if err := os.RemoveAll(future); err != nil {
		return err
	}
	if err := os.MkdirAll(future, 0o755); err != nil {
		return err
	}
	swapped := false
	defer func() {
		if !swapped {
			os.RemoveAll(future)
		}
	}()
	c := &fileCopy{src: src, dst: future, files: map[string]copiedFile{}}
	for attempt := 0; ; attempt++ {
		for round := 0; round < maxMoveRounds; round++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			c.reset(r.rewrites.Load())
			n, err := c.round(true)
			if err != nil {
				return err
			}
			progress(c.progress())
			if n < moveTailBytes {
				break
			}
		}
		if err := c.syncDst(); err != nil {
			return err
		}
		if err := r.storage().Flush(); err != nil {
			return err
		}
		deleted, ok, err := r.swapLog(c, dst)
		if err != nil {
			return err
		}
		if ok {
			swapped = true
			progress(c.progress())
			if err := os.RemoveAll(deleted); err != nil {
				r.logger.Warn("removing the log directory moved away from", "dir", deleted, "err", err)
			}
			return nil
		}
		if attempt >= 3 {
			return ErrMoveInterrupted
		}
	}
}

// SettledLog is the log once no swap of a move between directories is in
// progress (it waits for mu). A reader whose log answered
// storage.ErrClosed reads again from it: a log the swap replaced is
// serving from its new directory; the same closed log means the replica
// itself closed (its topic deleted).
func (r *Replica) SettledLog() LocalLog {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.storage()
}

// swapLog is step 3: ok false when a truncation is running (the caller
// copies again and retries). It returns the old directory's new name.
func (r *Replica) swapLog(c *fileCopy, dst string) (deleted string, ok bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.truncating {
		return "", false, nil
	}
	old := r.storage()
	cfg := old.Config()
	remote := old.RemoteOffset()
	if err := old.Close(); err != nil {
		return "", false, r.reopenLocked(old.Dir(), cfg, remote, fmt.Errorf("closing the log before the swap: %w", err))
	}
	c.reset(r.rewrites.Load())
	if _, err := c.round(false); err != nil {
		return "", false, r.reopenLocked(old.Dir(), cfg, remote, err)
	}
	if err := c.syncDst(); err != nil {
		return "", false, r.reopenLocked(old.Dir(), cfg, remote, err)
	}
	if err := os.Rename(c.dst, dst); err != nil {
		return "", false, r.reopenLocked(old.Dir(), cfg, remote, err)
	}
	var id [8]byte
	rand.Read(id[:])
	deleted = c.src + "." + hex.EncodeToString(id[:]) + "-delete"
	if err := os.Rename(c.src, deleted); err != nil {
		// Both copies are whole and equal: the next restart keeps one.
		r.logger.Warn("renaming the log directory moved away from", "dir", c.src, "err", err)
		deleted = c.src
	}
	l, err := storage.Open(dst, cfg, storage.Options{Logger: r.logger})
	if err != nil {
		// Put the old directory back and serve from it.
		os.RemoveAll(dst)
		if deleted != c.src {
			os.Rename(deleted, c.src)
		}
		return "", false, r.reopenLocked(c.src, cfg, remote, fmt.Errorf("opening the moved log: %w", err))
	}
	if remote >= 0 {
		l.SetRemoteOffset(remote)
	}
	r.log.Store(l)
	r.wakeWaiters()
	return deleted, true, nil
}

// reopenLocked serves the log from dir again after a failed swap and
// returns cause. Needs mu.
func (r *Replica) reopenLocked(dir string, cfg storage.Config, remote int64, cause error) error {
	l, err := storage.Open(dir, cfg, storage.Options{Logger: r.logger})
	if err != nil {
		return errors.Join(cause, fmt.Errorf("reopening %s: %w", dir, err))
	}
	if remote >= 0 {
		l.SetRemoteOffset(remote)
	}
	r.log.Store(l)
	return cause
}

// copiedFile is what a fileCopy last copied of one file.
type copiedFile struct {
	size  int64
	mod   time.Time
	inode uint64
}

// fileCopy mirrors the regular files of src into dst.
type fileCopy struct {
	src, dst string
	files    map[string]copiedFile
	gen      int64    // the replica's rewrite count when the copy last checked
	synced   []string // files written since the last syncDst
}

// reset forgets what was copied of the .log files when the log was
// truncated since (a truncated segment may have grown back past its old
// size with other bytes).
func (c *fileCopy) reset(gen int64) {
	if gen == c.gen {
		return
	}
	c.gen = gen
	for name := range c.files {
		if strings.HasSuffix(name, ".log") {
			delete(c.files, name)
		}
	}
}

// skipped are the files a copy leaves behind: temporary files of atomic
// writes and a compaction in progress, and deleted segments.
func skipped(name string) bool {
	for _, s := range []string{".tmp", ".cleaned", ".swap", ".deleted"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// round copies what changed and returns the bytes written. Files that
// vanish under it (retention, compaction) are skipped when tolerant: the
// next round sees the directory as it became.
func (c *fileCopy) round(tolerant bool) (int64, error) {
	entries, err := os.ReadDir(c.src)
	if err != nil {
		return 0, err
	}
	present := map[string]bool{}
	var written int64
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || skipped(name) {
			continue
		}
		present[name] = true
		n, err := c.copyFile(name)
		if err != nil {
			if tolerant && errors.Is(err, os.ErrNotExist) {
				delete(present, name)
				continue
			}
			return written, err
		}
		written += n
	}
	for name := range c.files {
		if !present[name] {
			delete(c.files, name)
			if err := os.Remove(filepath.Join(c.dst, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return written, err
			}
		}
	}
	return written, nil
}

// copyFile brings dst/name up to src/name: the new bytes of a .log file
// that only grew, else the whole file.
func (c *fileCopy) copyFile(name string) (int64, error) {
	in, err := os.Open(filepath.Join(c.src, name))
	if err != nil {
		return 0, err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return 0, err
	}
	now := copiedFile{size: fi.Size(), mod: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		now.inode = st.Ino
	}
	prev, known := c.files[name]
	if known && prev == now {
		return 0, nil
	}
	from := int64(0)
	if known && strings.HasSuffix(name, ".log") && prev.inode == now.inode && prev.size <= now.size {
		from = prev.size
	}
	flags := os.O_WRONLY | os.O_CREATE
	if from == 0 {
		flags |= os.O_TRUNC
	}
	out, err := os.OpenFile(filepath.Join(c.dst, name), flags, 0o644)
	if err != nil {
		return 0, err
	}
	n, err := copyRange(out, in, from, now.size)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, err
	}
	c.files[name] = now
	c.synced = append(c.synced, name)
	return n, nil
}

// copyRange copies in's bytes [from, to) to the same place in out.
func copyRange(out, in *os.File, from, to int64) (int64, error) {
	if _, err := out.Seek(from, io.SeekStart); err != nil {
		return 0, err
	}
	return io.Copy(out, io.NewSectionReader(in, from, to-from))
}

// syncDst fsyncs the files written since the last call and dst itself.
func (c *fileCopy) syncDst() error {
	for _, name := range c.synced {
		if c.files[name] == (copiedFile{}) {
			continue // removed since
		}
		if err := syncFile(filepath.Join(c.dst, name)); err != nil {
			return err
		}
	}
	c.synced = nil
	return syncFile(c.dst)
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// progress reports the bytes copied and the end of the last segment
// wholly copied (segments are named by base offset: a segment is whole
// once a later one exists).
func (c *fileCopy) progress() MoveProgress {
	var p MoveProgress
	var bases []int64
	for name, f := range c.files {
		p.Bytes += f.size
		if base, ok := segmentBase(name); ok {
			bases = append(bases, base)
		}
	}
	for _, b := range bases {
		if b > p.End {
			p.End = b
		}
	}
	return p
}

func segmentBase(name string) (int64, bool) {
	digits, ok := strings.CutSuffix(name, ".log")
	if !ok || len(digits) != 20 {
		return 0, false
	}
	var v int64
	for _, ch := range digits {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		v = v*10 + int64(ch-'0')
	}
	return v, true
}
