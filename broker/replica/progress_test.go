package replica

import (
	"slices"
	"testing"
)

func TestFollowerFetched(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		f                    follower
		offset, leaderLEO    int64
		now                  int64
		wantCaughtUp, wantLE int64
	}{
		{"reached the leader's end", follower{leo: 5, lastCaughtUpMs: 100, prevLeaderLEO: 8, prevFetchMs: 150}, 10, 10, 200, 200, 10},
		{"had what the leader had at the previous fetch", follower{leo: 5, lastCaughtUpMs: 100, prevLeaderLEO: 8, prevFetchMs: 150}, 8, 10, 200, 150, 10},
		{"behind the previous leader end", follower{leo: 5, lastCaughtUpMs: 100, prevLeaderLEO: 8, prevFetchMs: 150}, 7, 10, 200, 100, 10},
		{"first fetch, behind", newFollower(50), 3, 10, 200, 50, 10},
		{"first fetch, caught up", newFollower(50), 10, 10, 200, 200, 10},
		{"never moves back", follower{leo: 5, lastCaughtUpMs: 180, prevLeaderLEO: 8, prevFetchMs: 150}, 8, 10, 200, 180, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.f.fetched(tc.offset, tc.leaderLEO, tc.now)
			if got.lastCaughtUpMs != tc.wantCaughtUp || got.leo != tc.offset || got.prevLeaderLEO != tc.wantLE || got.prevFetchMs != tc.now {
				t.Fatalf("fetched = %+v, want caught up at %d, leo %d, prev leader end %d at %d", got, tc.wantCaughtUp, tc.offset, tc.wantLE, tc.now)
			}
		})
	}
}

func TestHighWatermark(t *testing.T) {
	known := func(leos map[int32]int64) map[int32]follower {
		out := map[int32]follower{}
		for id, leo := range leos {
			out[id] = follower{leo: leo}
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		isr        []int32
		pendingAdd int32
		followers  map[int32]follower
		wantHW     int64
		wantOK     bool
	}{
		{"leader alone", []int32{1}, -1, nil, 100, true},
		{"smallest in the ISR", []int32{1, 2, 3}, -1, known(map[int32]int64{2: 80, 3: 90}), 80, true},
		{"a follower ahead of the leader does not raise it", []int32{1, 2}, -1, known(map[int32]int64{2: 120}), 100, true},
		{"an ISR member not heard from", []int32{1, 2, 3}, -1, map[int32]follower{2: {leo: 80}, 3: newFollower(0)}, 0, false},
		{"an ISR member without progress", []int32{1, 2}, -1, nil, 0, false},
		{"followers outside the ISR do not count", []int32{1, 2}, -1, known(map[int32]int64{2: 90, 3: 10}), 90, true},
		{"the follower being added counts (maximal ISR)", []int32{1, 2}, 3, known(map[int32]int64{2: 90, 3: 70}), 70, true},
		{"the follower being added, not heard from", []int32{1, 2}, 3, map[int32]follower{2: {leo: 90}, 3: newFollower(0)}, 90, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hw, ok := highWatermark(1, 100, tc.isr, tc.pendingAdd, tc.followers)
			if ok != tc.wantOK || (ok && hw != tc.wantHW) {
				t.Fatalf("highWatermark = %d, %v; want %d, %v", hw, ok, tc.wantHW, tc.wantOK)
			}
		})
	}
}

func TestMayJoinISR(t *testing.T) {
	for _, tc := range []struct {
		offset, hw, epochStart int64
		want                   bool
	}{
		{100, 100, 50, true},
		{120, 100, 50, true},
		{99, 100, 50, false},   // lacks committed records
		{100, 100, 101, false}, // lacks the leader epoch's start: may diverge
		{101, 100, 101, true},
	} {
		if got := mayJoinISR(tc.offset, tc.hw, tc.epochStart); got != tc.want {
			t.Errorf("mayJoinISR(%d, hw %d, epoch start %d) = %v, want %v", tc.offset, tc.hw, tc.epochStart, got, tc.want)
		}
	}
}

func TestShrunkISR(t *testing.T) {
	const lag = 1000
	at := func(caughtUp map[int32]int64) map[int32]follower {
		out := map[int32]follower{}
		for id, ms := range caughtUp {
			out[id] = follower{leo: 0, lastCaughtUpMs: ms}
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		self      int32
		isr       []int32
		followers map[int32]follower
		want      []int32
	}{
		{"all caught up recently", 1, []int32{1, 2, 3}, at(map[int32]int64{2: 9500, 3: 9100}), nil},
		{"exactly at the limit stays", 1, []int32{1, 2}, at(map[int32]int64{2: 9000}), nil},
		{"one lagging", 1, []int32{1, 2, 3}, at(map[int32]int64{2: 9500, 3: 8999}), []int32{1, 2}},
		{"all lagging: the leader stays", 1, []int32{1, 2, 3}, at(map[int32]int64{2: 1, 3: 2}), []int32{1}},
		{"no progress known: stays", 1, []int32{1, 2}, nil, nil},
		{"the leader's own stale entry does not drop it", 2, []int32{2, 1}, at(map[int32]int64{1: 9999, 2: 0}), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := shrunkISR(tc.self, tc.isr, tc.followers, 10_000, lag)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("shrunkISR = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNextISRBackoff(t *testing.T) {
	want := []int64{100, 200, 400, 800, 1600, 3200, 5000, 5000}
	prev := int64(0)
	for i, w := range want {
		prev = nextISRBackoff(prev)
		if prev != w {
			t.Fatalf("backoff %d = %d ms, want %d", i, prev, w)
		}
	}
}

func TestFollowersFor(t *testing.T) {
	old := map[int32]follower{2: {leo: 50, lastCaughtUpMs: 10}, 4: {leo: 7}}
	got := followersFor(1, []int32{1, 2, 3}, old, false, 99)
	if len(got) != 2 || got[2] != old[2] || got[3] != newFollower(99) {
		t.Fatalf("kept progress: %+v", got)
	}
	if _, ok := got[4]; ok {
		t.Fatal("a follower no longer assigned kept its progress")
	}
	fresh := followersFor(1, []int32{1, 2}, old, true, 99)
	if fresh[2] != newFollower(99) {
		t.Fatalf("a new epoch kept old progress: %+v", fresh[2])
	}
}
