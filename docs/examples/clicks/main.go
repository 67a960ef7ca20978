// Command clicks is the README's stateful Go example: clicks per user per
// minute, counted exactly once on pebble state stores backed by changelog
// topics and emitted once per window when the window closes, and each
// user's total asked of the running App through its interactive-query
// listener.
//
//	strata server &                  # 127.0.0.1:9092
//	go run ./docs/examples/clicks    # or -brokers host:port
//
// It creates its own topics, produces the clicks (event times in three
// minutes of one day), prints each closed window read from the output
// topic and the queried total, checks every count against the clicks it
// produced, and exits 1 on a difference.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/streams"
)

const (
	users   = 3
	perUser = 40 // clicks per user, spread over three minutes
)

func main() {
	brokers := flag.String("brokers", "127.0.0.1:9092", "bootstrap broker")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, *brokers); err != nil {
		fmt.Fprintln(os.Stderr, "clicks:", err)
		os.Exit(1)
	}
}

type window struct {
	user  string
	start time.Time
}

func run(ctx context.Context, brokers string) error {
	base := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	// A fresh application id and topics per run: the example starts from
	// scratch each time (its clicks always happen at 09:00–09:05; on a
	// topic that already held later clicks they would be late, and dropped).
	appID := fmt.Sprintf("clicks-%d", time.Now().UnixNano())
	clicksTopic, countsTopic := appID+"-in", appID+"-per-minute"

	// The topology: clicks keyed by user, counted per tumbling minute
	// (10 s grace for late clicks), one final count per window.
	top := streams.NewTopology()
	clicks := streams.From(top, streams.String, streams.String, []string{clicksTopic})
	perMinute := streams.WindowedBy(clicks.GroupByKey(streams.String, streams.String),
		streams.TumblingWindows(time.Minute).Grace(10*time.Second)).Count(streams.Named("clicks-per-minute"))
	perMinute.Suppress(streams.UntilWindowCloses()).ToStream().
		To(countsTopic, streams.WindowedSerde(streams.String), streams.Int64)
	// And every user's clicks so far, a table kept for queries only.
	clicks.GroupByKey(streams.String, streams.String).Count(streams.Named("clicks-per-user"))

	stateDir, err := os.MkdirTemp("", "clicks-state-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stateDir)
	app, err := streams.NewApp(top, streams.Brokers(brokers), streams.ApplicationID(appID),
		streams.WithGuarantee(streams.ExactlyOnceV2), streams.StateDir(stateDir),
		streams.CommitInterval(100*time.Millisecond), streams.QueryListen("127.0.0.1:0"))
	if err != nil {
		return err
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumeTopics(countsTopic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for _, t := range []string{clicksTopic, countsTopic} {
		resp, err := adm.CreateTopic(ctx, 3, -1, nil, t)
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("creating %s: %w", t, err)
		}
	}

	appCtx, stopApp := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- app.Run(appCtx) }()
	defer func() { stopApp(); <-done }()

	// The clicks, in time order: every user clicks perUser times, every
	// 4.5 s from 09:00:00 (so windows 09:00, 09:01 and 09:02).
	want := map[window]int64{}
	var records []*kgo.Record
	user := func(u int) string { return fmt.Sprintf("user%d", u) }
	for i := range perUser {
		ts := base.Add(time.Duration(i) * 4500 * time.Millisecond)
		for u := range users {
			records = append(records, &kgo.Record{Topic: clicksTopic, Key: []byte(user(u)), Value: []byte("click"), Timestamp: ts})
			want[window{user(u), ts.Truncate(time.Minute)}]++
		}
	}
	// Then a click at 09:05 from each user: it moves stream time (per
	// partition) past the three windows and their grace, so they close and
	// are emitted. A click older than that on the same partition would
	// now be late and dropped.
	for u := range users {
		records = append(records, &kgo.Record{Topic: clicksTopic, Key: []byte(user(u)), Value: []byte("click"), Timestamp: base.Add(5 * time.Minute)})
	}
	if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		return fmt.Errorf("producing clicks: %w", err)
	}

	got := map[window]int64{}
	keys := streams.WindowedSerde(streams.String)
	for len(got) < len(want) {
		pollCtx, cancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pollCtx)
		cancel()
		select {
		case err := <-done:
			done <- err // for the deferred wait
			return fmt.Errorf("the app stopped: %v", err)
		default:
		}
		if err := ctx.Err(); err != nil {
			var missing []string
			for w := range want {
				if _, ok := got[w]; !ok {
					missing = append(missing, w.user+" "+w.start.Format("15:04"))
				}
			}
			sort.Strings(missing)
			return fmt.Errorf("waiting for %d windows, missing %v: %w", len(want), missing, err)
		}
		var ferr error
		fs.EachRecord(func(r *kgo.Record) {
			w, err := keys.Decode(r.Key)
			if err != nil {
				ferr = err
				return
			}
			n, err := streams.Int64.Decode(r.Value)
			if err != nil {
				ferr = err
				return
			}
			k := window{w.Key, w.Start.UTC()}
			if _, dup := got[k]; dup {
				ferr = fmt.Errorf("window %s %s emitted twice", k.user, k.start.Format("15:04"))
			}
			got[k] = n
		})
		if ferr != nil {
			return ferr
		}
	}
	var ws []window
	for w := range want {
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool {
		if ws[i].user != ws[j].user {
			return ws[i].user < ws[j].user
		}
		return ws[i].start.Before(ws[j].start)
	})
	for _, w := range ws {
		fmt.Printf("%s %s %d clicks\n", w.user, w.start.Format("15:04"), got[w])
		if got[w] != want[w] {
			return fmt.Errorf("%s %s: counted %d, produced %d", w.user, w.start.Format("15:04"), got[w], want[w])
		}
	}

	// A user's clicks so far, asked of the running App over HTTP: all of
	// them once the App applied its last commit to its store (404 until
	// its first commit reaches the store).
	url := fmt.Sprintf("http://%s/v1/jobs/%s/stores/clicks-per-user/keys/%s", app.QueryAddr(), appID, user(0))
	var answer struct {
		Value int64 `json:"value"`
	}
	for answer.Value != perUser+1 {
		if err := getJSON(ctx, url, &answer); err != nil && !errors.Is(err, errNotFound) {
			return err
		}
		if answer.Value != perUser+1 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("query: user0 has %d clicks, want %d: %w", answer.Value, perUser+1, ctx.Err())
			case <-time.After(50 * time.Millisecond): // no notification of store commits
			}
		}
	}
	fmt.Printf("query: user0 %d clicks in all\n", answer.Value)
	return nil
}

// errNotFound is a 404: the key is not (yet) in the store.
var errNotFound = errors.New("not found")

func getJSON(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("GET %s: %w", url, errNotFound)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
