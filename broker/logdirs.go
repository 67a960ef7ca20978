package broker

// Several log directories per node (JBOD, Kafka's log.dirs=a,b,c):
//
//   - Partition logs live in <dir>/<topic>-<partition>/ of one of the
//     directories. A new replica goes to the online directory holding the
//     fewest partitions (Kafka's rule, ties to the first listed); on
//     restart a partition is found in whichever directory holds it.
//   - The metadata quorum's log, the object-store default
//     (file://<first>/objects) and the remote-read cache stay in the first
//     directory, as Kafka's metadata.log.dir defaults to the first log dir.
//   - A directory that fails at run time (an I/O error of a log in it, or
//     the periodic probe finding it gone or unwritable) goes offline: its
//     partitions answer KAFKA_STORAGE_ERROR, housekeeping and follower
//     fetching skip them, and the node tells the controller
//     (cluster.OfflineReplicas), which moves their leadership and ISR
//     places to other replicas. The node keeps serving the other
//     directories. A directory comes back only with a restart.
//   - <topic>-<partition>-future/ is the destination of a move between
//     directories in progress (AlterReplicaLogDirs, logdir_move.go).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/strata-streaming/strata/broker/storage"
)

// futureDirSuffix names the copy of a partition being moved to another
// log directory, as Kafka does.
const futureDirSuffix = "-future"

// LogDirs lists the directories of log.dirs (--data-dir), in order,
// without empty entries.
func (c *Config) LogDirs() []string {
	var out []string
	for _, d := range strings.Split(c.DataDir, ",") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// firstLogDir is the directory of the metadata log, the default object
// store and the remote-read cache: the first log dir.
func (c *Config) firstLogDir() string {
	if dirs := c.LogDirs(); len(dirs) > 0 {
		return dirs[0]
	}
	return c.DataDir
}

// checkLogDirs refuses a directory listed twice or inside another.
func checkLogDirs(dirs []string) error {
	abs := make([]string, len(dirs))
	for i, d := range dirs {
		a, err := filepath.Abs(d)
		if err != nil {
			return fmt.Errorf("broker: log.dirs: %w", err)
		}
		abs[i] = a
	}
	for i := range abs {
		for j := range abs {
			if i == j {
				continue
			}
			if abs[i] == abs[j] || strings.HasPrefix(abs[i], abs[j]+string(filepath.Separator)) {
				return fmt.Errorf("broker: log.dirs: %s and %s overlap", dirs[i], dirs[j])
			}
		}
	}
	return nil
}

// logDir is one directory of log.dirs.
type logDir struct {
	path   string                // absolute
	failed atomic.Pointer[error] // why it went offline; nil while online
}

func (d *logDir) offline() bool { return d.failed.Load() != nil }

// logDirSet is the node's log directories and which partition lives in
// which.
type logDirSet struct {
	dirs []*logDir // in log.dirs order
	mu   struct {
		sync.Mutex
		placed map[string]*logDir // partition directory name → its log dir
		counts map[*logDir]int    // partitions per log dir (placed's values counted)
	}
	// onFailure is called once per directory that goes offline, outside
	// any lock (the server reports it to the controller).
	onFailure func(*logDir, error)
}

// openLogDirs creates the directories. One that cannot be created fails
// the start: a partition that lived there would otherwise be placed
// empty on another directory.
func openLogDirs(paths []string) (*logDirSet, error) {
	set := &logDirSet{}
	set.mu.placed = map[string]*logDir{}
	set.mu.counts = map[*logDir]int{}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("broker: log dir %s: %w", p, err)
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return nil, fmt.Errorf("broker: log dir: %w", err)
		}
		set.dirs = append(set.dirs, &logDir{path: abs})
	}
	return set, nil
}

// byPath returns the log dir with that absolute or configured path.
func (s *logDirSet) byPath(path string) *logDir {
	if s == nil {
		return nil // a Server built by hand in a test
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	for _, d := range s.dirs {
		if d.path == abs {
			return d
		}
	}
	return nil
}

// of returns the log dir holding the partition directory dir (nil when
// dir lies in none).
func (s *logDirSet) of(dir string) *logDir {
	if s == nil {
		return nil
	}
	// Partition directories are named <log dir>/<name>, so a prefix test
	// answers without cleaning paths: this runs for every partition of
	// every fetch and produce.
	for _, d := range s.dirs {
		if rest, ok := strings.CutPrefix(dir, d.path); ok && len(rest) > 1 && rest[0] == filepath.Separator &&
			!strings.ContainsRune(rest[1:], filepath.Separator) {
			return d
		}
	}
	return s.byPath(filepath.Dir(dir))
}

// locate returns the directory of the partition directory name: the log
// dir already holding it (a restart), else the online log dir with the
// fewest partitions. A partition found in several directories (a crash
// between the two renames that end a move, when both copies are equal)
// keeps the first and the others are removed.
func (s *logDirSet) locate(name string) (string, error) {
	var found []*logDir
	for _, d := range s.dirs {
		if fi, err := os.Stat(filepath.Join(d.path, name)); err == nil && fi.IsDir() {
			found = append(found, d)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.mu.placed[name]; d != nil {
		return filepath.Join(d.path, name), nil
	}
	var chosen *logDir
	if len(found) > 0 {
		chosen = found[0]
		for _, extra := range found[1:] {
			if err := os.RemoveAll(filepath.Join(extra.path, name)); err != nil {
				return "", err
			}
		}
	} else {
		for _, d := range s.dirs {
			if !d.offline() && (chosen == nil || s.mu.counts[d] < s.mu.counts[chosen]) {
				chosen = d
			}
		}
		if chosen == nil {
			return "", fmt.Errorf("%w: every log directory is offline", storage.ErrStorage)
		}
	}
	if chosen.offline() {
		return "", fmt.Errorf("%w: log directory %s is offline", storage.ErrStorage, chosen.path)
	}
	s.placeLocked(name, chosen)
	return filepath.Join(chosen.path, name), nil
}

// placeLocked records that name lives in d. Needs mu.
func (s *logDirSet) placeLocked(name string, d *logDir) {
	if old := s.mu.placed[name]; old != nil {
		s.mu.counts[old]--
	}
	s.mu.placed[name] = d
	s.mu.counts[d]++
}

// moved records that the partition directory name now lives in d.
func (s *logDirSet) moved(name string, d *logDir) {
	s.mu.Lock()
	s.placeLocked(name, d)
	s.mu.Unlock()
}

// forget drops a partition removed from this node.
func (s *logDirSet) forget(name string) {
	s.mu.Lock()
	if old := s.mu.placed[name]; old != nil {
		s.mu.counts[old]--
		delete(s.mu.placed, name)
	}
	s.mu.Unlock()
}

// count is how many partitions live in d.
func (s *logDirSet) count(d *logDir) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.counts[d]
}

// fail takes d offline (once) and reports it.
func (s *logDirSet) fail(d *logDir, cause error) {
	if d == nil || !d.failed.CompareAndSwap(nil, &cause) {
		return
	}
	if s.onFailure != nil {
		s.onFailure(d, cause)
	}
}

// offlineDirs are the paths of the directories that are offline.
func (s *logDirSet) offlineDirs() []string {
	var out []string
	for _, d := range s.dirs {
		if d.offline() {
			out = append(out, d.path)
		}
	}
	return out
}

// logDirProbeInterval is how often housekeeping probes the log dirs.
const logDirProbeInterval = 500 * time.Millisecond

// probeFile is created and removed by probe.
const probeFile = ".strata-probe"

// probe checks that every online directory is still a writable
// directory (a disk unmounted, the directory removed or replaced) and
// takes the ones that are not offline.
func (s *logDirSet) probe() {
	for _, d := range s.dirs {
		if d.offline() {
			continue
		}
		if err := probeDir(d.path); err != nil {
			s.fail(d, err)
		}
	}
}

func probeDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is no longer a directory", dir)
	}
	path := filepath.Join(dir, probeFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write([]byte("ok"))
	cerr := f.Close()
	rerr := os.Remove(path)
	return errors.Join(werr, cerr, rerr)
}

// usage is the total and usable bytes of the file system holding dir,
// -1 when unknown.
func usage(dir string) (total, usable int64) {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return -1, -1
	}
	return int64(fs.Blocks) * int64(fs.Bsize), int64(fs.Bavail) * int64(fs.Bsize)
}

// partitionDirNames are the names of partition directories (and future
// copies) directly in dir, with the entry names that are neither.
func isPartitionDirName(name string) bool {
	name = strings.TrimSuffix(name, futureDirSuffix)
	return partitionDirPattern.MatchString(name) && !slices.Contains([]string{"objects", "remote-cache"}, name)
}

// partitionOffline reports whether p's log dir is offline.
func (s *Server) partitionOffline(p *partition) bool {
	d := s.logDirs.of(p.Log().Dir())
	return d != nil && d.offline()
}

// storageFailed takes p's log dir offline after an I/O error of its log
// (err matching storage.ErrStorage; other errors are ignored).
func (s *Server) storageFailed(p *partition, err error) {
	if !errors.Is(err, storage.ErrStorage) {
		return
	}
	s.logDirs.fail(s.logDirs.of(p.Log().Dir()), err)
}
