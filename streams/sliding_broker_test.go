package streams_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/streams"
)

// TestSlidingWindowsOverBroker: a sliding-window aggregation run by an App
// over a real broker (three partitions, out-of-order input) ends with every
// window holding what the brute-force reference says, no extra window, and
// the state of each window in its changelog.
func TestSlidingWindowsOverBroker(t *testing.T) {
	const size = 10
	b := startBroker(t)
	createTopic(t, b.Addr, "in", 3)
	recs := slidingInput(7, 3000, 12, 40)
	want := slidingReference(recs, size)
	if err := produceEach(b.Addr, 0, len(recs), func(i int) *kgo.Record {
		r := recs[i]
		return &kgo.Record{Topic: "in", Key: []byte(r.key), Value: []byte(fmt.Sprint(r.id)), Timestamp: time.UnixMilli(r.ts)}
	}); err != nil {
		t.Fatal(err)
	}
	app, err := streams.NewApp(slidingIDsTopology(size*time.Millisecond, time.Minute, false),
		streams.Brokers(b.Addr), streams.ApplicationID("sliding"), streams.StateDir(t.TempDir()),
		streams.CommitInterval(100*time.Millisecond), streams.QueryListen("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	runApp(t, app)

	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.ConsumeTopics("ids"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	wk := streams.WindowedSerde(streams.String)
	got := map[string]map[int64]string{}
	equal := func() bool {
		for key, ws := range want {
			if len(got[key]) != len(ws) {
				return false
			}
			for start, ids := range ws {
				if got[key][start] != ids {
					return false
				}
			}
		}
		return len(got) == len(want)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !equal() && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			w, err := wk.Decode(r.Key)
			if err != nil {
				t.Fatal(err)
			}
			if got[w.Key] == nil {
				got[w.Key] = map[int64]string{}
			}
			var ids []int
			for _, s := range strings.Split(string(r.Value), ",") {
				var id int
				fmt.Sscan(s, &id)
				ids = append(ids, id)
			}
			got[w.Key][w.Start.UnixMilli()] = joinIDs(ids)
		})
		cancel()
	}
	compareWindows(t, got, want)

	// The store answers window queries with the aggregates alone (the
	// stored largest timestamp stripped), once committed.
	var answered map[int64]string
	for key := range want {
		deadline := time.Now().Add(30 * time.Second)
		for {
			a := queryGet(t, http.MethodGet, app.QueryAddr(), "/v1/jobs/sliding/stores/ids/keys/"+key+"/windows?limit=1000")
			answered = map[int64]string{}
			ws, _ := a.body["windows"].([]any)
			for _, w := range ws {
				w := w.(map[string]any)
				var ids []int
				for _, s := range strings.Split(fmt.Sprint(w["value"]), ",") {
					var id int
					fmt.Sscan(s, &id)
					ids = append(ids, id)
				}
				start := int64(w["start"].(float64))
				if int64(w["end"].(float64)) != start+size {
					t.Fatalf("window %v: end is not start + %d", w, size)
				}
				answered[start] = joinIDs(ids)
			}
			if a.status == http.StatusOK && fmt.Sprint(answered) == fmt.Sprint(want[key]) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("key %s: query answered %d %d windows, want %d: %v", key, a.status, len(answered), len(want[key]), a.body["error"])
			}
			time.Sleep(50 * time.Millisecond) // the next commit
		}
	}
	windows := 0
	for _, ws := range want {
		windows += len(ws)
	}
	if s := app.Stats(); s.LateDropped != 0 || s.RecordsIn != uint64(len(recs)) {
		t.Errorf("stats %+v: want %d records in, none late", s, len(recs))
	}
	t.Logf("%d records, %d windows, complete after %v", len(recs), windows, time.Since(start))
}
