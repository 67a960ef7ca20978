package console

import (
	"fmt"
	"testing"
	"time"
)

// TestLagHistoryBounds: a point in the same minHistorySpacing slot as the
// last one replaces it (and a series of close points does not collapse
// into one), points older than historySpan go, and the group measured
// longest ago is dropped when maxHistoryGroups is reached.
func TestLagHistoryBounds(t *testing.T) {
	h := newLagHistory()
	start := time.UnixMilli(1_700_000_000_000)
	at := func(d time.Duration) int64 { return start.Add(d).UnixMilli() }
	h.add("g", lagPoint{Time: at(0), Records: 10})
	h.add("g", lagPoint{Time: at(time.Second), Records: 9}) // replaces the first
	h.add("g", lagPoint{Time: at(0), Records: 99})          // older than the last: ignored
	h.add("g", lagPoint{Time: at(30 * time.Second), Records: 5})
	if got := h.get("g", start.Add(time.Minute)); fmt.Sprint(got) != fmt.Sprint([]lagPoint{{Time: at(time.Second), Records: 9}, {Time: at(30 * time.Second), Records: 5}}) {
		t.Fatalf("points: %+v", got)
	}
	for i := range 10 { // every 4.9 s: a point per 5 s slot
		h.add("close", lagPoint{Time: at(time.Duration(i) * 4900 * time.Millisecond), Records: int64(i)})
	}
	if got := h.get("close", start.Add(time.Minute)); len(got) < 9 || got[len(got)-1].Records != 9 {
		t.Fatalf("points 4.9 s apart: %+v", got)
	}
	h.add("g", lagPoint{Time: at(historySpan + 10*time.Second), Records: 1})
	if got := h.get("g", start.Add(historySpan+10*time.Second)); len(got) != 2 || got[0].Records != 5 {
		t.Fatalf("after an hour: %+v", got)
	}
	for i := range maxHistoryGroups {
		h.add(fmt.Sprint("other-", i), lagPoint{Time: at(2 * historySpan), Records: 1})
	}
	if got := h.get("g", start.Add(2*historySpan)); len(got) != 0 {
		t.Fatalf("the oldest group was kept: %+v", got)
	}
	h.retain(map[string]bool{"other-1": true})
	if len(h.mu.groups) != 1 {
		t.Fatalf("retain kept %d groups", len(h.mu.groups))
	}
}
