package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// dump is everything a registry's API shows, soft-deleted versions
// included, as one string to compare registries by.
func dump(a api) string {
	a.t.Helper()
	var b strings.Builder
	var subjects []string
	a.ok("GET", "/subjects?deleted=true", nil, &subjects)
	for _, s := range subjects {
		var versions []int
		a.ok("GET", "/subjects/"+s+"/versions?deleted=true", nil, &versions)
		for _, v := range versions {
			_, body := a.do("GET", fmt.Sprintf("/subjects/%s/versions/%d?deleted=true", s, v), nil)
			b.WriteString(body + "\n")
		}
		_, live := a.do("GET", "/subjects/"+s+"/versions", nil)
		_, config := a.do("GET", "/config/"+s, nil)
		_, mode := a.do("GET", "/mode/"+s, nil)
		fmt.Fprintf(&b, "%s live %s config %s mode %s\n", s, live, config, mode)
	}
	for _, p := range []string{"/config", "/mode", "/schemas?deleted=true"} {
		_, body := a.do("GET", p, nil)
		b.WriteString(body + "\n")
	}
	return b.String()
}

// caughtUp waits until r has applied everything in log.
func caughtUp(t *testing.T, r *Registry, log Log) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	end, err := log.EndOffset(ctx)
	if err == nil {
		err = r.waitApplied(ctx, end)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestRegistryRacingWriters has two registries on one log register different
// schemas under one subject from the same end offset: one record lands
// where its writer expected, the other does not count and its writer
// decides again. Both succeed, with distinct versions and ids, and every
// view — the two live ones, and ones rebuilt from the log before and
// after compaction — agrees.
func TestRegistryRacingWriters(t *testing.T) {
	log := NewMemoryLog()
	r1, r2 := startRegistry(t, log), startRegistry(t, log)
	a1, a2 := newAPI(t, r1), newAPI(t, r2)

	var mu sync.Mutex
	reads := 0
	bothRead := make(chan struct{})
	log.setHooks(func() {
		mu.Lock()
		defer mu.Unlock()
		if reads++; reads == 2 {
			close(bothRead)
		}
	}, func() { <-bothRead })

	schemas := []string{v1, v2} // compatible either way round
	ids := make([]int, 2)
	var wg sync.WaitGroup
	for i, a := range []api{a1, a2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, body := a.do("POST", "/subjects/s/versions", map[string]string{"schema": schemas[i]})
			var resp registerResponse
			if status != 200 || json.Unmarshal([]byte(body), &resp) != nil {
				t.Errorf("registry %d: %d %s", i+1, status, body)
			}
			ids[i] = resp.ID
		}()
	}
	wg.Wait()
	log.setHooks(nil, nil)
	if t.Failed() {
		t.FailNow()
	}
	if reads < 3 {
		t.Fatalf("%d end-offset reads: the loser never decided again", reads)
	}
	if ids[0] == ids[1] {
		t.Fatalf("both schemas got id %d", ids[0])
	}
	// Three SCHEMA records: two for version 1 (one counted), one for 2.
	var keys []string
	for _, rec := range log.Records() {
		keys = append(keys, string(rec.Key))
	}
	if len(keys) != 3 || keys[0] == keys[1] || !strings.Contains(keys[0], `"version":1`) || !strings.Contains(keys[1], `"version":1`) || !strings.Contains(keys[2], `"version":2`) {
		t.Fatalf("records: %v", keys)
	}
	caughtUp(t, r1, log)
	caughtUp(t, r2, log)
	want := dump(a1)
	if !strings.Contains(want, `"version":2`) {
		t.Fatalf("no version 2:\n%s", want)
	}
	if got := dump(a2); got != want {
		t.Fatalf("views differ:\n%s\n---\n%s", want, got)
	}
	for _, id := range ids {
		var versions []subjectVersion
		a2.ok("GET", fmt.Sprintf("/schemas/ids/%d/versions", id), nil, &versions)
		if len(versions) != 1 || versions[0].Subject != "s" {
			t.Fatalf("id %d: %v", id, versions)
		}
	}
	// Rebuilt from the log, and from the log compacted: the loser's record
	// has its own key (its writer's node), so it never replaces a winner.
	if got := dump(newAPI(t, startRegistry(t, log))); got != want {
		t.Fatalf("rebuilt view differs:\n%s\n---\n%s", want, got)
	}
	log.Compact(true)
	if got := dump(newAPI(t, startRegistry(t, log))); got != want {
		t.Fatalf("view rebuilt after compaction differs:\n%s\n---\n%s", want, got)
	}
}

// TestRegistryRebuild replays a history of every kind of write into new
// registries: from the log, and from the log compacted with and without
// its tombstones.
func TestRegistryRebuild(t *testing.T) {
	log := NewMemoryLog()
	r := startRegistry(t, log)
	a := newAPI(t, r)
	address := `{"type":"record","name":"Address","fields":[{"name":"city","type":"string"}]}`
	a.register("address", address)
	a.register("user", map[string]any{"schema": record(`{"name":"home","type":"Address"}`),
		"references": []map[string]any{{"name": "Address", "subject": "address", "version": 1}}})
	a.register("s", v1)
	a.register("s", v2)
	a.register("gone", `"int"`)
	a.register("gone", `"long"`)
	a.want("DELETE", "/subjects/s/versions/1", nil, 200, `1`)
	a.want("DELETE", "/subjects/gone", nil, 200, `[1,2]`)
	a.want("DELETE", "/subjects/gone/versions/1?permanent=true", nil, 200, `1`)
	a.want("PUT", "/config", map[string]string{"compatibility": "FULL"}, 200, `{"compatibility":"FULL"}`)
	a.want("PUT", "/config/s", map[string]string{"compatibility": "NONE"}, 200, `{"compatibility":"NONE"}`)
	a.want("PUT", "/config/address", map[string]string{"compatibility": "NONE"}, 200, `{"compatibility":"NONE"}`)
	a.want("DELETE", "/config/address", nil, 200, `{"compatibilityLevel":"NONE","compatibility":"NONE"}`)
	a.want("PUT", "/mode/user", map[string]string{"mode": "READONLY"}, 200, `{"mode":"READONLY"}`)
	a.register("s", bad)
	want := dump(a)
	for _, step := range []struct {
		name    string
		compact func()
	}{
		{"as written", func() {}},
		{"compacted", func() { log.Compact(false) }},
		{"compacted without tombstones", func() { log.Compact(true) }},
	} {
		step.compact()
		if got := dump(newAPI(t, startRegistry(t, log))); got != want {
			t.Fatalf("%s: rebuilt view differs:\n%s\n---\n%s", step.name, want, got)
		}
	}
}
