package quota

import (
	"math"
	"testing"
	"time"
)

func TestLookupPrecedence(t *testing.T) {
	q := func(u, c Part, v float64) Quota {
		return Quota{Entity: Entity{User: u, Client: c}, Values: map[string]float64{ProducerByteRate: v}}
	}
	none := Part{}
	all := []Quota{
		q(Named("alice"), Named("app"), 1),
		q(Named("alice"), DefaultPart, 2),
		q(Named("alice"), none, 3),
		q(DefaultPart, Named("app"), 4),
		q(DefaultPart, DefaultPart, 5),
		q(DefaultPart, none, 6),
		q(none, Named("app"), 7),
		q(none, DefaultPart, 8),
	}
	// Removing the most specific entity each time exposes the next one.
	for i := range all {
		tbl := NewTable(all[i:])
		m, ok := tbl.Lookup(ProducerByteRate, "alice", "app")
		if !ok || m.Bound != float64(i+1) {
			t.Fatalf("with entities %d.. : %+v %v, want bound %d", i, m, ok, i+1)
		}
		e := all[i].Entity
		wantUser, wantClient := "", ""
		if e.User.Set {
			wantUser = "alice"
		}
		if e.Client.Set {
			wantClient = "app"
		}
		if m.Key.User != wantUser || m.Key.ClientID != wantClient || m.Key.Entity != e {
			t.Fatalf("entity %d: sensor key %+v", i, m.Key)
		}
	}
	tbl := NewTable(all[:3])
	if _, ok := tbl.Lookup(ProducerByteRate, "bob", "app"); ok {
		t.Fatal("alice's quotas apply to bob")
	}
	if _, ok := tbl.Lookup(ConsumerByteRate, "alice", "app"); ok {
		t.Fatal("a producer quota applies to fetches")
	}
	// A default user quota is per user: alice and bob get their own sensors.
	tbl = NewTable(all[5:6])
	a, _ := tbl.Lookup(ProducerByteRate, "alice", "x")
	b, _ := tbl.Lookup(ProducerByteRate, "bob", "y")
	if a.Key == b.Key {
		t.Fatalf("users share the default user's sensor: %+v", a.Key)
	}
	if !NewTable(nil).Empty() || !(*Table)(nil).Empty() {
		t.Fatal("empty table not empty")
	}
}

func TestValidate(t *testing.T) {
	for _, ok := range []struct {
		k string
		v float64
	}{{ProducerByteRate, 1024}, {ConsumerByteRate, 1}, {RequestPercentage, 12.5}, {ControllerMutationRate, 0.5}} {
		if err := Validate(ok.k, ok.v); err != nil {
			t.Errorf("%s=%v: %v", ok.k, ok.v, err)
		}
	}
	for _, bad := range []struct {
		k string
		v float64
	}{{"bytes_per_second", 1}, {ProducerByteRate, 0}, {ProducerByteRate, -5}, {ProducerByteRate, 1.5}, {RequestPercentage, math.NaN()}} {
		if err := Validate(bad.k, bad.v); err == nil {
			t.Errorf("%s=%v accepted", bad.k, bad.v)
		}
	}
}

// TestThrottledClientConvergesToQuota: a client that sends as fast as its
// throttle times allow averages the quota, and one that went quiet may
// burst about one window's worth, not the whole window's.
func TestThrottledClientConvergesToQuota(t *testing.T) {
	const bound = 1 << 20 // 1 MiB/s
	s := NewSensors(DefaultWindow)
	m := Match{Bound: bound, Key: SensorKey{Quota: ProducerByteRate, User: "u"}}
	start := time.Unix(1000, 0)
	now := start
	var sent float64
	for now.Sub(start) < 60*time.Second {
		const chunk = 64 << 10
		sent += chunk
		wait := s.Record(m, chunk, now)
		now = now.Add(2*time.Millisecond + wait) // 2 ms to send, then muted
	}
	got := sent / now.Sub(start).Seconds()
	if got < 0.95*bound || got > 1.05*bound {
		t.Fatalf("averaged %.0f B/s against a %d B/s quota", got, bound)
	}
	if r := s.Rate(m.Key, now); r < 0.9*bound || r > 1.1*bound {
		t.Fatalf("measured rate %.0f B/s", r)
	}

	// Quiet for a minute, then a burst: throttled after about a window.
	now = now.Add(time.Minute)
	var burst float64
	for i := 0; i < 1000; i++ {
		burst += 64 << 10
		if s.Record(m, 64<<10, now) > 0 {
			break
		}
		now = now.Add(time.Millisecond)
	}
	if burst > 1.2*bound {
		t.Fatalf("burst of %.0f bytes before the first throttle, want about one window (%d)", burst, bound)
	}
	// Throttle times are capped at the window.
	if w := s.Record(m, 1<<40, now); w != 11*time.Second {
		t.Fatalf("a huge request waits %v, want the 11 s cap", w)
	}
}

func TestSensorsAreSeparate(t *testing.T) {
	s := NewSensors(DefaultWindow)
	now := time.Unix(0, 0)
	slow := Match{Bound: 100, Key: SensorKey{Quota: ProducerByteRate, ClientID: "slow"}}
	fast := Match{Bound: 1e9, Key: SensorKey{Quota: ProducerByteRate, ClientID: "fast"}}
	if s.Record(slow, 1000, now) == 0 {
		t.Fatal("10x over the quota is not throttled")
	}
	if w := s.Record(fast, 1000, now); w != 0 {
		t.Fatalf("another client throttled %v by the slow one's usage", w)
	}
}
