package loglevel

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestRegistry(t *testing.T) {
	var out bytes.Buffer
	r := New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}), []string{"a.b", "a.b.c", "x"}, nil)
	if i, _ := r.Get("a.b.c"); i.Level != slog.LevelInfo {
		t.Fatalf("a.b.c starts at %v, want the handler's INFO", i.Level)
	}
	abc := r.Logger("a.b.c")
	abc.Debug("hidden")
	if out.Len() != 0 {
		t.Fatalf("debug line at INFO: %s", out.String())
	}
	// A namespace sets what is below it by dots, not its siblings.
	if got := strings.Join(r.Set("a", slog.LevelDebug, time.Unix(1, 0)), " "); got != "a a.b a.b.c" {
		t.Errorf("Set(a) changed %q", got)
	}
	abc.Debug("shown")
	if !strings.Contains(out.String(), "msg=shown") {
		t.Errorf("debug line missing after raising the level: %q", out.String())
	}
	if i, _ := r.Get("x"); i.Level != slog.LevelInfo || i.LastModified != 0 {
		t.Errorf("x changed by Set(a): %+v", i)
	}
	// Reset takes the parent's level back.
	r.Set("a.b", slog.LevelError, time.Unix(2, 0))
	if !r.Reset("a.b", time.Unix(3, 0)) {
		t.Fatal("Reset(a.b) found no logger")
	}
	if i, _ := r.Get("a.b.c"); i.Level != slog.LevelDebug || i.LastModified != 3000 {
		t.Errorf("a.b.c after Reset(a.b): %+v, want DEBUG from a", i)
	}
	if r.Reset("nope", time.Now()) {
		t.Error("Reset of an unknown logger reported true")
	}
	// Root covers every logger; a custom parent joins two trees.
	r2 := New(slog.DiscardHandler, []string{"strata.connect"}, func(n string) string {
		if n == "strata.connect" {
			return "org.apache.kafka.connect"
		}
		return ""
	})
	r2.Logger("org.apache.kafka.connect")
	if got := r2.Set("org.apache.kafka.connect", slog.LevelWarn, time.Now()); strings.Join(got, " ") != "org.apache.kafka.connect strata.connect" {
		t.Errorf("custom parent: %v", got)
	}
	if got := len(r2.Set(Root, slog.LevelError, time.Now())); got != 3 {
		t.Errorf("root set %d loggers, want all 3 of %v", got, r2.Names())
	}
	for name, want := range map[string]slog.Level{"trace": slog.LevelDebug - 4, "WARN": slog.LevelWarn, "off": slog.Level(1 << 10)} {
		if l, ok := Parse(name); !ok || l != want || !strings.EqualFold(Name(l), name) {
			t.Errorf("Parse(%s) = %v %v, Name %s", name, l, ok, Name(l))
		}
	}
	if _, ok := Parse("LOUD"); ok {
		t.Error("Parse(LOUD) succeeded")
	}
}
