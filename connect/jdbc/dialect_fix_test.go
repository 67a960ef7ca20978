package jdbc

import (
	"testing"
	"time"

	"github.com/strata-streaming/strata/connect"
)

// TestQuoteColumnsWhole: a dotted column name is one identifier; only
// table names are split into schema and table.
func TestQuoteColumnsWhole(t *testing.T) {
	for _, d := range []dialect{postgresDialect{}, sqliteDialect{}} {
		if got := d.quote(`a.b`); got != `"a.b"` {
			t.Errorf("%s: column a.b quoted %s", d.name(), got)
		}
		if got := d.quote(`x"y`); got != `"x""y"` {
			t.Errorf("%s: column x\"y quoted %s", d.name(), got)
		}
		if got := d.quoteTable(`public.t`); got != `"public"."t"` {
			t.Errorf("%s: table public.t quoted %s", d.name(), got)
		}
	}
}

// TestBindDateInZone: an instant written to a DATE column takes its date
// in db.timezone; a Date logical value (midnight UTC) keeps its date.
func TestBindDateInZone(t *testing.T) {
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	task := &SinkTask{}
	task.mu.cfg = &sinkConfig{dbTimezone: loc}
	task.mu.dialect = postgresDialect{}
	instant := time.Date(2024, 3, 2, 2, 0, 0, 0, time.UTC) // 1 March, 21:00 in New York
	got, err := task.bind(instant, &connect.Schema{Type: connect.TypeInt64, Name: connect.LogicalTimestamp}, kindDate)
	if err != nil || got != "2024-03-01" {
		t.Fatalf("timestamp into DATE: %v, %v; want 2024-03-01", got, err)
	}
	day := time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC)
	got, err = task.bind(day, &connect.Schema{Type: connect.TypeInt32, Name: connect.LogicalDate}, kindDate)
	if err != nil || got != "2024-03-02" {
		t.Fatalf("Date into DATE: %v, %v; want 2024-03-02", got, err)
	}
}
