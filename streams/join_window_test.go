package streams_test

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/strata-streaming/strata/streams"
)

func windowJoinTopology(kind string, w streams.JoinWindows) *streams.Topology {
	top := streams.NewTopology()
	l := streams.From(top, streams.String, streams.String, []string{"l"})
	r := streams.From(top, streams.String, streams.String, []string{"r"})
	serdes := streams.StreamJoined[string, string, string]{Keys: streams.String, LeftValues: streams.String, RightValues: streams.String}
	opt := func(p *string) string {
		if p == nil {
			return "nil"
		}
		return *p
	}
	var out streams.Stream[string, string]
	switch kind {
	case "inner":
		out = streams.JoinStreams(l, r, w, serdes, func(_ string, a, b string) (string, error) { return a + "+" + b, nil })
	case "left":
		out = streams.LeftJoinStreams(l, r, w, serdes, func(_ string, a string, b *string) (string, error) { return a + "+" + opt(b), nil })
	case "outer":
		out = streams.OuterJoinStreams(l, r, w, serdes, func(_ string, a, b *string) (string, error) { return opt(a) + "+" + opt(b), nil })
	}
	out.To("out", streams.String, streams.String)
	return top
}

// joined returns the join output as "key=value@ms".
func joined(d *streams.TestDriver) []string {
	var out []string
	for _, r := range d.Output("out") {
		out = append(out, string(r.Key)+"="+string(r.Value)+"@"+strconv.FormatInt(r.Timestamp.UnixMilli(), 10))
	}
	return out
}

func wantJoined(t *testing.T, d *streams.TestDriver, want ...string) {
	t.Helper()
	if got := joined(d); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestStreamStreamJoinWindow: a left record at t joins right records in
// [t-Before, t+After], bounds included, whichever arrives first; the
// output has the later timestamp; records past their window's end + grace
// are dropped as late; other keys never join.
func TestStreamStreamJoinWindow(t *testing.T) {
	d := newDriver(t, windowJoinTopology("inner", streams.JoinWindows{Before: 10 * time.Millisecond, After: 20 * time.Millisecond, Grace: 5 * time.Millisecond}))
	pipeAt(t, d, "l", "k", "a", 100)
	pipeAt(t, d, "r", "k", "x", 120) // t+After: joins
	pipeAt(t, d, "r", "j", "x", 120) // other key
	wantJoined(t, d, "k=a+x@120")
	pipeAt(t, d, "r", "k", "y", 121) // past t+After
	wantJoined(t, d)
	pipeAt(t, d, "l", "k", "b", 131) // right window [121, 151]: y; x at 120 too old
	wantJoined(t, d, "k=b+y@131")
	pipeAt(t, d, "l", "k", "c", 110) // out of order, within grace: [100, 130] → x, y
	wantJoined(t, d, "k=c+x@120", "k=c+y@121")
	// Stream time 131: a left record is late below 131-20-5, a right
	// one below 131-10-5.
	pipeAt(t, d, "l", "k", "late", 105)
	pipeAt(t, d, "r", "k", "late", 115)
	wantJoined(t, d)
	if got := d.Stats().LateDropped; got != 2 {
		t.Fatalf("late dropped %d, want 2", got)
	}
	// On time: its window [101, 131] holds c and b (a at 100 expired).
	pipeAt(t, d, "r", "k", "z", 121)
	wantJoined(t, d, "k=c+z@121", "k=b+z@131")
}

// TestStreamStreamOuterJoins: unmatched records are emitted with a nil
// other side only when their window closes (stream time past ts + reach
// + grace), matched ones never.
func TestStreamStreamOuterJoins(t *testing.T) {
	w := streams.JoinWindows{Before: 10 * time.Millisecond, After: 10 * time.Millisecond, Grace: 5 * time.Millisecond}
	for _, kind := range []string{"left", "outer"} {
		t.Run(kind, func(t *testing.T) {
			d := newDriver(t, windowJoinTopology(kind, w))
			pipeAt(t, d, "l", "k", "a", 100) // joins x
			pipeAt(t, d, "l", "k", "b", 102) // joins x
			pipeAt(t, d, "r", "k", "x", 105)
			pipeAt(t, d, "l", "j", "lonely", 106)
			pipeAt(t, d, "r", "i", "alone", 107)
			wantJoined(t, d, "k=a+x@105", "k=b+x@105")
			// An entry at t closes once stream time passes t+10+5.
			pipeAt(t, d, "l", "k", "tick", 121)
			wantJoined(t, d)
			pipeAt(t, d, "l", "k", "tick2", 122) // closes lonely@106
			wantJoined(t, d, "j=lonely+nil@106")
			pipeAt(t, d, "r", "k", "tock", 200) // closes alone@107, tick, tick2
			if kind == "left" {
				wantJoined(t, d, "k=tick+nil@121", "k=tick2+nil@122")
			} else {
				wantJoined(t, d, "i=nil+alone@107", "k=tick+nil@121", "k=tick2+nil@122")
			}
		})
	}
}

// TestStreamStreamJoinChangelog: both sides' buffers are changelogged and
// expired entries deleted (tombstones).
func TestStreamStreamJoinChangelog(t *testing.T) {
	d := newDriver(t, windowJoinTopology("inner", streams.JoinWindows{Before: time.Millisecond, After: time.Millisecond}))
	pipeAt(t, d, "l", "k", "a", 100)
	pipeAt(t, d, "r", "k", "x", 200) // expires a
	left := d.Output("test-driver-join-3-left-changelog")
	right := d.Output("test-driver-join-3-right-changelog")
	var tombstones int
	for _, r := range left {
		if r.Value == nil {
			tombstones++
		}
	}
	if len(left) != 4 || tombstones != 2 || len(right) != 2 {
		t.Fatalf("left changelog %d records (%d tombstones), right %d", len(left), tombstones, len(right))
	}
}
