package console

import (
	"fmt"
	"testing"
	"time"
)

// TestLagHistoryBounds: points closer than minHistorySpacing replace the
// last one, points older than historySpan go, and the group measured
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
