package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer collects a worker's log lines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startLoggingWorker is startWorker with the worker's log at INFO into out.
func startLoggingWorker(t *testing.T, props map[string]string, out *lockedBuffer) *Worker {
	t.Helper()
	cfg, err := NewWorkerConfig(props)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	w, err := NewWorker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// jsonKeys lists an object's keys in the order the body has them.
func jsonKeys(t *testing.T, data []byte) []string {
	t.Helper()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatalf("%v in %s", err, data)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var keys []string
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				depth++
			} else {
				depth--
			}
		case string:
			if depth == 1 && len(keys) < len(raw) && raw[v] != nil && !slices.Contains(keys, v) {
				keys = append(keys, v)
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return keys
}

// TestRESTAdminLoggers drives /admin/loggers as Kafka Connect defines it
// (KIP-495, KIP-976): levels by logger, a raised level that makes debug
// lines appear, Kafka's namespace covering the runtime's loggers, a
// cluster-scoped level reaching another worker through the config topic,
// and the error bodies.
func TestRESTAdminLoggers(t *testing.T) {
	b := startBroker(t)
	var logA, logB lockedBuffer
	a := startLoggingWorker(t, testWorkerProps(b.Addr, "group.id", "loggers"), &logA)
	other := startLoggingWorker(t, testWorkerProps(b.Addr, "group.id", "loggers"), &logB)
	base := "http://" + a.Addr()

	status, data := rest(t, "GET", base+"/admin/loggers", nil)
	if status != 200 {
		t.Fatalf("GET /admin/loggers: %d %s", status, data)
	}
	keys := jsonKeys(t, data)
	if !slices.IsSorted(keys) || !slices.Contains(keys, "root") || !slices.Contains(keys, "org.apache.kafka.connect") || !slices.Contains(keys, "strata.connect.rest") {
		t.Fatalf("loggers %v: want sorted, with root, org.apache.kafka.connect and strata.connect.rest", keys)
	}
	var all map[string]loggerLevel
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	if l := all["strata.connect.rest"]; l.Level != "INFO" || l.LastModified != nil {
		t.Fatalf("strata.connect.rest at start: %+v, want INFO never modified", l)
	}

	// At INFO a REST request writes no debug line; at DEBUG it does.
	restJSON(t, "GET", base+"/connectors", nil, 200, nil)
	if strings.Contains(logA.String(), "REST request") {
		t.Fatalf("debug line at INFO:\n%s", logA.String())
	}
	var changed []string
	restJSON(t, "PUT", base+"/admin/loggers/strata.connect.rest", map[string]string{"level": "debug"}, 200, &changed)
	if !slices.Equal(changed, []string{"strata.connect.rest"}) {
		t.Fatalf("PUT strata.connect.rest changed %v", changed)
	}
	restJSON(t, "GET", base+"/connectors", nil, 200, nil)
	if out := logA.String(); !strings.Contains(out, "level=DEBUG") || !strings.Contains(out, `msg="connect: REST request" method=GET path=/connectors status=200`) {
		t.Fatalf("no debug line of the REST request at DEBUG:\n%s", out)
	}
	var one loggerLevel
	restJSON(t, "GET", base+"/admin/loggers/strata.connect.rest", nil, 200, &one)
	if one.Level != "DEBUG" || one.LastModified == nil || time.Since(time.UnixMilli(*one.LastModified)) > time.Minute {
		t.Fatalf("strata.connect.rest after PUT: %+v", one)
	}
	// The other worker is untouched by a worker-scoped change.
	restJSON(t, "GET", "http://"+other.Addr()+"/admin/loggers/strata.connect.rest", nil, 200, &one)
	if one.Level != "INFO" {
		t.Fatalf("other worker's strata.connect.rest: %+v", one)
	}

	// Kafka's namespace sets every runtime logger (not root), and a
	// connector's logger created later inherits it: the file source's
	// debug line appears (on either worker, so both get the level).
	restJSON(t, "PUT", base+"/admin/loggers/org.apache.kafka.connect", map[string]string{"level": "DEBUG"}, 200, &changed)
	if !slices.IsSorted(changed) || !slices.Contains(changed, "strata.connect.worker") || !slices.Contains(changed, "org.apache.kafka.connect") || slices.Contains(changed, "root") {
		t.Fatalf("PUT org.apache.kafka.connect changed %v", changed)
	}
	restJSON(t, "PUT", "http://"+other.Addr()+"/admin/loggers/org.apache.kafka.connect", map[string]string{"level": "DEBUG"}, 200, nil) // the task may run there
	input := filepath.Join(t.TempDir(), "in.txt")
	appendLines(t, input, 1, 2)
	restJSON(t, "POST", base+"/connectors", map[string]any{"name": "src", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": input, "topic": "logged", "tasks.max": "1",
	}}, 201, nil)
	waitFor(t, 30*time.Second, "the file task's debug line", func() (bool, string) {
		out := logA.String() + logB.String()
		return strings.Contains(out, `msg="file-source: task started"`), ""
	})

	// Cluster scope: 204, and every worker applies it from the config topic.
	if status, data := rest(t, "PUT", base+"/admin/loggers/strata.connect.store?scope=cluster", map[string]string{"level": "ERROR"}); status != 204 || len(data) != 0 {
		t.Fatalf("PUT ?scope=cluster: %d %s", status, data)
	}
	for _, w := range []*Worker{a, other} {
		waitFor(t, 15*time.Second, "the cluster-scoped level on "+w.Addr(), func() (bool, string) {
			var l loggerLevel
			restJSON(t, "GET", "http://"+w.Addr()+"/admin/loggers/strata.connect.store", nil, 200, &l)
			return l.Level == "ERROR" && l.LastModified != nil, l.Level
		})
	}

	// Errors, in Kafka Connect's shape.
	wantError(t, "GET", base+"/admin/loggers/no.such.logger", nil, 404, "Logger no.such.logger not found.")
	wantError(t, "PUT", base+"/admin/loggers/strata.connect", map[string]string{"level": "LOUD"}, 400, "Invalid log level 'LOUD'.")
	wantError(t, "PUT", base+"/admin/loggers/strata.connect?scope=cluster", map[string]string{"level": "LOUD"}, 400, "Invalid log level 'LOUD'.")
	wantError(t, "PUT", base+"/admin/loggers/strata.connect", map[string]string{"lvl": "DEBUG"}, 400, "Desired 'level' parameter was not specified in request.")
	wantError(t, "PUT", base+"/admin/loggers/strata.connect", map[string]int{"level": 3}, 400, "Invalid log level '3'.")
	wantError(t, "PUT", base+"/admin/loggers/strata.connect", "{", 400, "Invalid JSON")
	wantError(t, "PUT", base+"/admin/loggers/strata.connect", "", 400, "Request body is empty")
	wantError(t, "DELETE", base+"/admin/loggers/strata.connect", nil, 405, "Method Not Allowed")
}

// TestRESTPluginsAndValidateName checks connectorsOnly=false (KIP-769) and
// the validate endpoint's name, which is the connector class the config
// gives, as Kafka's.
func TestRESTPluginsAndValidateName(t *testing.T) {
	b := startBroker(t)
	w := startWorker(t, testWorkerProps(b.Addr))
	base := "http://" + w.Addr()

	types := func(url string) map[string]string {
		var plugins []pluginInfo
		restJSON(t, "GET", url, nil, 200, &plugins)
		out := map[string]string{}
		for _, p := range plugins {
			if p.Version == "" {
				t.Errorf("%s: %s has no version", url, p.Class)
			}
			out[p.Class] = p.Type
		}
		return out
	}
	for _, url := range []string{base + "/connector-plugins", base + "/connector-plugins?connectorsOnly=true"} {
		got := types(url)
		if got["FileStreamSource"] != "source" || got["file-sink"] != "sink" || got[JSONConverterClass] != "" {
			t.Errorf("%s: %v", url, got)
		}
	}
	all := types(base + "/connector-plugins?connectorsOnly=false")
	for class, want := range map[string]string{
		"FileStreamSource":       "source",
		"file-sink":              "sink",
		JSONConverterClass:       "converter",
		JSONSchemaConverterClass: "converter",
		ProtobufConverterClass:   "converter",
		StringConverterClass:     "converter",
		ByteArrayConverterClass:  "converter",
	} {
		if all[class] != want {
			t.Errorf("connectorsOnly=false: %s is %q, want %q (all: %v)", class, all[class], want, all)
		}
	}
	wantError(t, "GET", base+"/connector-plugins?connectorsOnly=maybe", nil, 400, "connectorsOnly")

	for class, want := range map[string]string{
		"org.apache.kafka.connect.file.FileStreamSourceConnector": "org.apache.kafka.connect.file.FileStreamSourceConnector",
		"FileStreamSource": "FileStreamSource",
		"":                 "FileStreamSourceConnector", // none given: the path's
	} {
		cfg := map[string]string{"name": "x", "file": "/tmp/x", "topic": "t"}
		if class != "" {
			cfg["connector.class"] = class
		}
		var v validateResponse
		restJSON(t, "PUT", base+"/connector-plugins/FileStreamSourceConnector/config/validate", cfg, 200, &v)
		if v.Name != want || v.ErrorCount != 0 || len(v.Configs) == 0 {
			t.Errorf("validate with connector.class %q: name %q errors %d, want name %q", class, v.Name, v.ErrorCount, want)
		}
	}
	wantError(t, "PUT", base+"/connector-plugins/NoSuchConnector/config/validate", map[string]string{"name": "x"}, 404, "Unknown plugin")
}
