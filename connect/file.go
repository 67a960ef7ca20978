package connect

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The built-in file connectors, Kafka's FileStreamSource and FileStreamSink
// under the same class names and settings:
//
//	file-source (FileStreamSource, org.apache.kafka.connect.file.FileStreamSourceConnector)
//	  file        the file to tail (required)
//	  topic       the topic to write each line to (required)
//	  batch.size  most lines per poll (default 2000)
//	  One task. Its source partition is {"filename": file}, its offset
//	  {"position": byte offset after the last line sent}. Only complete
//	  lines (ending in \n) are sent; the value is the line as a string.
//
//	file-sink (FileStreamSink, org.apache.kafka.connect.file.FileStreamSinkConnector)
//	  file        the file to append to (default: standard output)
//	  topics / topics.regex
//	  Each record's value is written as one line; Flush fsyncs.

func init() {
	Register(Plugin{
		Class:   "file-source",
		Aliases: []string{"FileStreamSource", "FileStreamSourceConnector", "org.apache.kafka.connect.file.FileStreamSourceConnector"},
		Type:    "source",
		Version: Version,
		Logger:  fileLogger,
		New:     func() Connector { return &fileSourceConnector{} },
	})
	Register(Plugin{
		Class:   "file-sink",
		Aliases: []string{"FileStreamSink", "FileStreamSinkConnector", "org.apache.kafka.connect.file.FileStreamSinkConnector"},
		Type:    "sink",
		Version: Version,
		Logger:  fileLogger,
		New:     func() Connector { return &fileSinkConnector{} },
	})
}

const defaultFileBatchSize = 2000

// fileLogger is the file connectors' logger (loggers.go).
const fileLogger = "strata.connect.file"

type fileSourceConnector struct{ cfg Config }

func (c *fileSourceConnector) Start(_ context.Context, cfg Config) error {
	if errs := c.Validate(cfg); len(errs) > 0 {
		return &errs[0]
	}
	c.cfg = cfg
	return nil
}

func (c *fileSourceConnector) TaskConfigs(int) ([]Config, error) {
	return []Config{{"file": c.cfg["file"], "topic": c.cfg["topic"], "batch.size": c.cfg["batch.size"]}}, nil
}

func (c *fileSourceConnector) Stop() error { return nil }

func (c *fileSourceConnector) ConfigKeys() []ConfigKey {
	return []ConfigKey{
		{Name: "file", Type: "STRING", Required: true, Importance: "HIGH", Documentation: "Source filename."},
		{Name: "topic", Type: "STRING", Required: true, Importance: "HIGH", Documentation: "The topic to publish data to."},
		{Name: "batch.size", Type: "INT", Default: strconv.Itoa(defaultFileBatchSize), Importance: "LOW", Documentation: "The maximum number of records the source task can read from the file each time it is polled."},
	}
}

func (c *fileSourceConnector) Validate(cfg Config) []ConfigError {
	var errs []ConfigError
	if strings.TrimSpace(cfg["file"]) == "" {
		errs = append(errs, ConfigError{"file", "Missing required configuration \"file\" which has no default value."})
	}
	switch t := strings.TrimSpace(cfg["topic"]); {
	case t == "":
		errs = append(errs, ConfigError{"topic", "Missing required configuration \"topic\" which has no default value."})
	case strings.Contains(t, ","):
		errs = append(errs, ConfigError{"topic", "'topic' in FileStreamSourceConnector configuration requires definition of a single topic."})
	}
	if b := cfg["batch.size"]; b != "" {
		if n, err := strconv.Atoi(b); err != nil || n < 1 {
			errs = append(errs, ConfigError{"batch.size", "Invalid value " + b + ": must be a positive integer"})
		}
	}
	return errs
}

func (c *fileSourceConnector) NewTask() SourceTask { return &fileSourceTask{} }

type fileSourceTask struct {
	path      string
	topic     string
	batchSize int
	position  int64
	file      *os.File
}

func (t *fileSourceTask) partition() map[string]any { return map[string]any{"filename": t.path} }

func (t *fileSourceTask) Start(ctx context.Context, cfg Config, offsets OffsetReader) error {
	t.path, t.topic, t.batchSize = cfg["file"], cfg["topic"], defaultFileBatchSize
	if b := cfg["batch.size"]; b != "" {
		n, err := strconv.Atoi(b)
		if err != nil || n < 1 {
			return &ConfigError{"batch.size", "must be a positive integer"}
		}
		t.batchSize = n
	}
	off, err := offsets.Offset(t.partition())
	if err != nil {
		return fmt.Errorf("file-source: reading offset: %w", err)
	}
	if off != nil {
		pos, ok := toInt64(off["position"])
		if !ok || pos < 0 {
			return fmt.Errorf("file-source: stored offset %v has no valid position", off)
		}
		t.position = pos
	}
	LoggerFrom(ctx).Debug("file-source: task started", "file", t.path, "topic", t.topic, "position", t.position)
	return nil
}

func (t *fileSourceTask) Poll(ctx context.Context) ([]SourceRecord, error) {
	deadline := time.Now().Add(time.Second)
	for {
		recs, err := t.readLines()
		if err != nil || len(recs) > 0 {
			return recs, err
		}
		if time.Now().After(deadline) {
			return nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// readLines returns up to batch.size complete lines after the position.
func (t *fileSourceTask) readLines() ([]SourceRecord, error) {
	if t.file == nil {
		f, err := os.Open(t.path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil // not there yet: keep waiting, as Kafka does
		}
		if err != nil {
			return nil, fmt.Errorf("file-source: %w", err)
		}
		t.file = f
	}
	r := bufio.NewReaderSize(io.NewSectionReader(t.file, t.position, 1<<62), 64<<10)
	var recs []SourceRecord
	pos := t.position
	for len(recs) < t.batchSize {
		line, err := r.ReadBytes('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				break // a partial line waits for its newline
			}
			return recs, fmt.Errorf("file-source: reading %s: %w", t.path, err)
		}
		pos += int64(len(line))
		text := string(bytes.TrimRight(line, "\r\n"))
		recs = append(recs, SourceRecord{
			SourcePartition: t.partition(),
			SourceOffset:    map[string]any{"position": pos},
			Topic:           t.topic,
			ValueSchema:     &Schema{Type: TypeString},
			Value:           text,
			Timestamp:       time.Now(),
		})
	}
	t.position = pos
	return recs, nil
}

func (t *fileSourceTask) Commit(context.Context) error { return nil }

func (t *fileSourceTask) Stop() error {
	if t.file != nil {
		err := t.file.Close()
		t.file = nil
		return err
	}
	return nil
}

type fileSinkConnector struct{ cfg Config }

func (c *fileSinkConnector) Start(_ context.Context, cfg Config) error { c.cfg = cfg; return nil }

func (c *fileSinkConnector) TaskConfigs(int) ([]Config, error) {
	return []Config{{"file": c.cfg["file"]}}, nil
}

func (c *fileSinkConnector) Stop() error { return nil }

func (c *fileSinkConnector) ConfigKeys() []ConfigKey {
	return []ConfigKey{{Name: "file", Type: "STRING", Importance: "HIGH", Documentation: "Destination filename. If not specified, the standard output will be used."}}
}

func (c *fileSinkConnector) Validate(Config) []ConfigError { return nil }

func (c *fileSinkConnector) NewTask() SinkTask { return &fileSinkTask{} }

type fileSinkTask struct {
	mu   sync.Mutex
	out  io.Writer
	file *os.File
	buf  *bufio.Writer
}

func (t *fileSinkTask) Start(_ context.Context, cfg Config) error {
	if path := cfg["file"]; path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("file-sink: %w", err)
		}
		t.file, t.out = f, f
	} else {
		t.out = os.Stdout
	}
	t.buf = bufio.NewWriter(t.out)
	return nil
}

func (t *fileSinkTask) Put(_ context.Context, records []SinkRecord) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range records {
		if _, err := t.buf.WriteString(displayValue(r.Value)); err != nil {
			return fmt.Errorf("file-sink: %w", err)
		}
		if err := t.buf.WriteByte('\n'); err != nil {
			return fmt.Errorf("file-sink: %w", err)
		}
	}
	return nil
}

// displayValue renders a value the way Java's toString would show it.
func displayValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case []byte:
		return string(x)
	case *Struct:
		var b strings.Builder
		b.WriteString("Struct{")
		first := true
		for i, f := range x.Schema.Fields {
			if i >= len(x.Values) || x.Values[i] == nil {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.WriteString(f.Name + "=" + displayValue(x.Values[i]))
		}
		b.WriteByte('}')
		return b.String()
	}
	return fmt.Sprint(v)
}

func (t *fileSinkTask) Flush(context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.buf.Flush(); err != nil {
		return fmt.Errorf("file-sink: %w", err)
	}
	if t.file != nil {
		if err := t.file.Sync(); err != nil {
			return fmt.Errorf("file-sink: %w", err)
		}
	}
	return nil
}

func (t *fileSinkTask) Stop() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var err error
	if t.buf != nil {
		err = t.buf.Flush()
	}
	if t.file != nil {
		err = errors.Join(err, t.file.Close())
		t.file = nil
	}
	return err
}
