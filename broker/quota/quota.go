// Package quota is Kafka's client quotas (KIP-13, KIP-55, KIP-124, KIP-219,
// KIP-546, KIP-599) on one node: which quota applies to a (user,
// client-id), the rate each quota's users have reached, and how long a
// request that went over must be throttled. It imports no Strata package.
package quota

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// The quota keys (KIP-546's names, as kafka-configs and kadm send them).
const (
	ProducerByteRate       = "producer_byte_rate"
	ConsumerByteRate       = "consumer_byte_rate"
	RequestPercentage      = "request_percentage"
	ControllerMutationRate = "controller_mutation_rate"
)

// Keys lists the quota keys; IntegerKey reports the ones Kafka stores as
// longs (bytes per second).
var Keys = []string{ProducerByteRate, ConsumerByteRate, RequestPercentage, ControllerMutationRate}

func IntegerKey(k string) bool { return k == ProducerByteRate || k == ConsumerByteRate }

// Known reports whether k is a quota key.
func Known(k string) bool { return slices.Contains(Keys, k) }

// Validate checks one quota value.
func Validate(key string, v float64) error {
	if !Known(key) {
		return fmt.Errorf("unknown quota %q (%s, %s, %s or %s)", key, ProducerByteRate, ConsumerByteRate, RequestPercentage, ControllerMutationRate)
	}
	if !(v > 0) {
		return fmt.Errorf("quota %s=%v: must be positive", key, v)
	}
	if IntegerKey(key) && v != float64(int64(v)) {
		return fmt.Errorf("quota %s=%v: must be a whole number of bytes per second", key, v)
	}
	return nil
}

// Part is one side of an entity: absent, the default, or a name.
type Part struct {
	Set     bool   // the entity has this part
	Default bool   // the part is <default>
	Name    string // when Set and not Default
}

// Named and DefaultPart build parts.
func Named(name string) Part { return Part{Set: true, Name: name} }

var DefaultPart = Part{Set: true, Default: true}

// Entity is a quota entity: a user part and a client-id part.
type Entity struct{ User, Client Part }

// Quota is one entity's configured values.
type Quota struct {
	Entity Entity
	Values map[string]float64
}

// Table is the configured quotas, looked up by Kafka's precedence.
type Table struct {
	byEntity map[Entity]map[string]float64
}

// NewTable indexes quotas.
func NewTable(quotas []Quota) *Table {
	t := &Table{byEntity: map[Entity]map[string]float64{}}
	for _, q := range quotas {
		t.byEntity[q.Entity] = q.Values
	}
	return t
}

// Empty reports whether no quota is configured (the common case: nothing
// to measure).
func (t *Table) Empty() bool { return t == nil || len(t.byEntity) == 0 }

// Match is the quota that applies to a request: its bound and the sensor
// key its usage is counted under (all the connections that share that key
// share the quota).
type Match struct {
	Bound float64
	Key   SensorKey
}

// SensorKey names whose usage a quota measures: the user and client id
// the matching entity names or defaults (empty where the entity has no
// such part), and the quota key.
type SensorKey struct {
	Quota, User, ClientID string
	// Entity is the matching entity (for metrics' labels).
	Entity Entity
}

// Lookup finds the quota of key for user and clientID with Kafka's
// precedence: user and client, user and default client, user, default
// user and client, default user and default client, default user, client,
// default client. ok is false when none applies.
func (t *Table) Lookup(key, user, clientID string) (Match, bool) {
	if t.Empty() {
		return Match{}, false
	}
	u, du, c, dc, none := Named(user), DefaultPart, Named(clientID), DefaultPart, Part{}
	for _, e := range [...]Entity{{u, c}, {u, dc}, {u, none}, {du, c}, {du, dc}, {du, none}, {none, c}, {none, dc}} {
		v, ok := t.byEntity[e][key]
		if !ok {
			continue
		}
		sk := SensorKey{Quota: key, Entity: e}
		if e.User.Set {
			sk.User = user
		}
		if e.Client.Set {
			sk.ClientID = clientID
		}
		return Match{Bound: v, Key: sk}, true
	}
	return Match{}, false
}

// Window is how usage is measured: Samples samples of Size each (Kafka's
// quota.window.num, 11, and quota.window.size.seconds, 1).
type Window struct {
	Samples int
	Size    time.Duration
}

// DefaultWindow is Kafka's.
var DefaultWindow = Window{Samples: 11, Size: time.Second}

// Sensors measures usage per sensor key and computes throttle times. It is
// safe for concurrent use: the map of sensors is read under a shared lock,
// each sensor has its own, and both are held only for arithmetic.
type Sensors struct {
	w  Window
	mu sync.RWMutex
	m  map[SensorKey]*rate
}

// NewSensors returns sensors measuring over w.
func NewSensors(w Window) *Sensors {
	if w.Samples < 2 {
		w.Samples = 2
	}
	if w.Size <= 0 {
		w.Size = time.Second
	}
	return &Sensors{w: w, m: map[SensorKey]*rate{}}
}

// rate is a sampled rate: the value recorded in each of the last samples.
type rate struct {
	mu      sync.Mutex
	samples []sample // ring, current at cur
	cur     int
	last    time.Time
}

type sample struct {
	start time.Time
	value float64
}

// Record adds v to the usage of m's key at now and returns how long the
// client must wait for its rate over the window to come back to the bound:
// with B recorded over an elapsed E, B/Q - E. Kafka counts a young
// window's elapsed time as at least samples-1 windows, which lets a new or
// returning client burst ten seconds' worth of quota at full speed; here
// the elapsed time starts at the oldest sample that holds usage (at least
// one window), so a burst is about one window's worth. The wait is capped
// at the whole window.
func (s *Sensors) Record(m Match, v float64, now time.Time) time.Duration {
	r := s.sensor(m.Key, now)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.advance(now, s.w)
	r.samples[r.cur].value += v
	r.last = now
	total, elapsed := r.measure(now, s.w)
	wait := time.Duration((total/m.Bound)*float64(time.Second)) - elapsed
	if wait <= 0 {
		return 0
	}
	return min(wait, time.Duration(s.w.Samples)*s.w.Size)
}

// sensor returns k's sensor, made on first use.
func (s *Sensors) sensor(k SensorKey, now time.Time) *rate {
	s.mu.RLock()
	r := s.m[k]
	s.mu.RUnlock()
	if r != nil {
		return r
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r = s.m[k]; r == nil {
		r = &rate{samples: make([]sample, s.w.Samples), last: now}
		r.samples[0].start = now
		s.gcLocked(now)
		s.m[k] = r
	}
	return r
}

// Rate is the measured rate of m's key (per second), for metrics and tests.
func (s *Sensors) Rate(k SensorKey, now time.Time) float64 {
	s.mu.RLock()
	r := s.m[k]
	s.mu.RUnlock()
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.advance(now, s.w)
	total, elapsed := r.measure(now, s.w)
	return total / elapsed.Seconds()
}

// advance starts a new sample when the current one is a window old,
// clearing the samples it steps over.
func (r *rate) advance(now time.Time, w Window) {
	c := r.samples[r.cur]
	since := now.Sub(c.start)
	if since < w.Size {
		return
	}
	n := int(since / w.Size)
	start := c.start.Add(time.Duration(n) * w.Size)
	for i := 0; i < min(n, len(r.samples)); i++ {
		r.cur = (r.cur + 1) % len(r.samples)
		r.samples[r.cur] = sample{}
	}
	r.samples[r.cur].start = start
}

// measure sums the samples still in the window and the time since the
// oldest of them that holds usage (at least one window).
func (r *rate) measure(now time.Time, w Window) (float64, time.Duration) {
	span := time.Duration(len(r.samples)) * w.Size
	var total float64
	oldest := now
	for _, s := range r.samples {
		if s.value == 0 || now.Sub(s.start) >= span {
			continue
		}
		total += s.value
		if s.start.Before(oldest) {
			oldest = s.start
		}
	}
	return total, max(now.Sub(oldest), w.Size)
}

// gcLocked drops sensors idle for two windows, so clients that come and
// go do not grow the map.
func (s *Sensors) gcLocked(now time.Time) {
	if len(s.m) < 1024 {
		return
	}
	idle := 2 * time.Duration(s.w.Samples) * s.w.Size
	for k, r := range s.m {
		r.mu.Lock()
		last := r.last
		r.mu.Unlock()
		if now.Sub(last) > idle {
			delete(s.m, k)
		}
	}
}
