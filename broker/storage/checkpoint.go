package storage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

const (
	recoveryCheckpointFile    = "recovery-checkpoint"
	recoveryCheckpointVersion = 1
	logStartOffsetFile        = "log-start-offset"
	logStartOffsetVersion     = 0
	tmpSuffix                 = ".tmp"
	deletedSuffix             = ".deleted"
)

// recoveryCheckpoint records how far the log was durable at the last
// Checkpoint: every segment below segmentBase, and the first position bytes
// of that segment with their index entries, were fsynced.
type recoveryCheckpoint struct {
	nextOffset           int64 // log end offset at the checkpoint
	segmentBase          int64 // base offset of the then active segment
	position             int64 // its size at the checkpoint
	maxTimestamp         int64 // its max timestamp up to position
	offsetOfMaxTimestamp int64
	latestEpoch          int32 // latest leader epoch, to detect a lost epoch file
}

var recoveryCheckpointFields = []string{
	"next-offset", "segment", "position", "max-timestamp", "max-timestamp-offset", "latest-epoch",
}

func (c recoveryCheckpoint) values() []int64 {
	return []int64{c.nextOffset, c.segmentBase, c.position, c.maxTimestamp, c.offsetOfMaxTimestamp, int64(c.latestEpoch)}
}

// encode renders the checkpoint as "key value" lines closed by a CRC-32C of
// all preceding bytes.
func (c recoveryCheckpoint) encode() []byte {
	return encodeCheckedFields(recoveryCheckpointVersion, recoveryCheckpointFields, c.values())
}

func decodeRecoveryCheckpoint(data []byte) (recoveryCheckpoint, error) {
	values, err := decodeCheckedFields(data, recoveryCheckpointFile, recoveryCheckpointVersion, recoveryCheckpointFields)
	if err != nil {
		return recoveryCheckpoint{}, err
	}
	c := recoveryCheckpoint{
		nextOffset: values[0], segmentBase: values[1], position: values[2],
		maxTimestamp: values[3], offsetOfMaxTimestamp: values[4], latestEpoch: int32(values[5]),
	}
	if c.segmentBase < 0 || c.position < 0 || c.nextOffset < c.segmentBase {
		return recoveryCheckpoint{}, fmt.Errorf("%w: %s: inconsistent values", ErrCorruptLog, recoveryCheckpointFile)
	}
	return c, nil
}

// encodeCheckedFields renders the small checkpoint files of a log: a
// "version N" line, one "key value" line per field, and a "crc32c" line
// over all preceding bytes.
func encodeCheckedFields(version int, fields []string, values []int64) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "version %d\n", version)
	for i, v := range values {
		fmt.Fprintf(&b, "%s %d\n", fields[i], v)
	}
	fmt.Fprintf(&b, "crc32c %08x\n", CRC32C(b.Bytes()))
	return b.Bytes()
}

// decodeCheckedFields parses what encodeCheckedFields wrote, checking the
// CRC, the version and that exactly the given fields appear in order. Errors
// wrap ErrCorruptLog and name the file.
func decodeCheckedFields(data []byte, file string, version int, fields []string) ([]int64, error) {
	bad := func(why string) ([]int64, error) {
		return nil, fmt.Errorf("%w: %s: %s", ErrCorruptLog, file, why)
	}
	body, crcLine, ok := cutLastLine(data)
	if !ok {
		return bad("no crc line")
	}
	crcText, ok := strings.CutPrefix(crcLine, "crc32c ")
	if !ok {
		return bad("no crc line")
	}
	want, err := strconv.ParseUint(crcText, 16, 32)
	if err != nil || uint32(want) != CRC32C(body) {
		return bad("crc mismatch")
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	if !sc.Scan() || sc.Text() != fmt.Sprintf("version %d", version) {
		return bad("unknown version")
	}
	values := make([]int64, len(fields))
	for i, key := range fields {
		if !sc.Scan() {
			return bad("missing " + key)
		}
		text, ok := strings.CutPrefix(sc.Text(), key+" ")
		if !ok {
			return bad("missing " + key)
		}
		if values[i], err = strconv.ParseInt(text, 10, 64); err != nil {
			return bad("bad " + key)
		}
	}
	if sc.Scan() {
		return bad("trailing lines")
	}
	return values, nil
}

// cutLastLine splits "a\nb\nlast\n" into "a\nb\n" and "last".
func cutLastLine(data []byte) (body []byte, last string, ok bool) {
	trimmed, ok := bytes.CutSuffix(data, []byte("\n"))
	if !ok {
		return nil, "", false
	}
	i := bytes.LastIndexByte(trimmed, '\n')
	if i < 0 {
		return nil, "", false
	}
	return data[:i+1], string(trimmed[i+1:]), true
}

func encodeLogStartOffset(offset int64) []byte {
	return fmt.Appendf(nil, "%d\n%d\n", logStartOffsetVersion, offset)
}

func decodeLogStartOffset(data []byte) (int64, error) {
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 2 || lines[0] != strconv.Itoa(logStartOffsetVersion) {
		return 0, fmt.Errorf("%w: %s: malformed", ErrCorruptLog, logStartOffsetFile)
	}
	offset, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || offset < 0 {
		return 0, fmt.Errorf("%w: %s: bad offset %q", ErrCorruptLog, logStartOffsetFile, lines[1])
	}
	return offset, nil
}

// readOptionalFile returns the file's contents, or nil without error if it
// does not exist.
func readOptionalFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// WriteFileAtomic replaces dir/name with data durably: write a temporary
// file (name+".tmp"), fsync it, rename it over the target, fsync the
// directory. A reader after any crash sees the old or the new content,
// never a mix. It is the broker's one atomic-file write: the log's
// checkpoints and, in package broker, partition.metadata and the producer
// snapshots. (metadata has its own, wal.WriteFileAtomic: metadata may not
// import broker.)
func WriteFileAtomic(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+tmpSuffix)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("storage: write %s: %w", name, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("storage: write %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("storage: fsync %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("storage: write %s: %w", name, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("storage: rename %s: %w", name, err)
	}
	if err := syncPath(dir); err != nil {
		return fmt.Errorf("storage: fsync dir %s: %w", dir, err)
	}
	return nil
}

// removeFileDurably unlinks dir/name (if present) and fsyncs the directory.
func removeFileDurably(dir, name string) error {
	err := os.Remove(filepath.Join(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("storage: remove %s: %w", name, err)
	}
	return syncPath(dir)
}
