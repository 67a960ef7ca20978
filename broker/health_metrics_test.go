package broker

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"testing"
	"time"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// TestPartitionHealthOf: brokers by state, leaderless partitions
// cluster-wide, and the partitions one node leads with those of them
// under-replicated.
func TestPartitionHealthOf(t *testing.T) {
	st := cluster.State{
		Brokers: map[int32]cluster.Broker{
			1: {NodeID: 1},
			2: {NodeID: 2, Fenced: true},
			3: {NodeID: 3, ShuttingDown: true},
		},
		Topics: map[string]cluster.Topic{
			"a": {Partitions: []cluster.Partition{
				{Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, Leader: 1},       // led, healthy
				{Replicas: []int32{1, 2, 3}, ISR: []int32{1}, Leader: 1},             // led, under-replicated
				{Replicas: []int32{2, 1, 3}, ISR: []int32{2}, Leader: 2},             // another node's
				{Replicas: []int32{2, 3}, ISR: []int32{2}, Leader: cluster.NoLeader}, // offline
			}},
			"b": {Partitions: []cluster.Partition{
				{Replicas: []int32{1}, ISR: []int32{1}, Leader: 1},
				{Replicas: []int32{3}, ISR: []int32{3}, Leader: cluster.NoLeader},
			}},
		},
	}
	got := partitionHealthOf(st, 1)
	want := partitionHealth{brokers: map[string]int{"active": 1, "fenced": 1, "shutting_down": 1}, offline: 2, led: 3, underReplicated: 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("partitionHealthOf = %+v, want %+v", got, want)
	}
	if got := partitionHealthOf(cluster.State{}, 1); got.offline+got.led+got.underReplicated != 0 || len(got.brokers) != 0 {
		t.Fatalf("empty state: %+v", got)
	}
}

// TestHealthMetrics: one node with an SSL listener exports its quorum
// leader, its led partitions, its log directory's file system and the
// listener certificate's expiry on /metrics.
func TestHealthMetrics(t *testing.T) {
	f := newTLSFixture(t)
	tb := startTestBroker(t, func(c *Config) {
		mustSet(t, c,
			"listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
			"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SSL:SSL",
			"ssl.keystore.location", f.server.Keystore,
		)
	})
	tb.createTopic("health", 3, nil)
	m := tb.scrape()
	dir := tb.srv.logDirs.dirs[0].path
	wantExact := map[string]float64{
		"strata_raft_leader_id":                     float64(tb.cfg.NodeID),
		"strata_raft_has_leader":                    1,
		`strata_brokers{state="active"}`:            1,
		`strata_brokers{state="fenced"}`:            0,
		"strata_partitions_offline":                 0,
		"strata_partitions_leader":                  3,
		"strata_partitions_under_replicated":        0,
		`strata_log_dir_offline{dir="` + dir + `"}`: 0,
		"strata_isr_shrinks_total":                  0,
		"strata_isr_expands_total":                  0,
	}
	for series, want := range wantExact {
		if got, ok := m[series]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	total, free := m[`strata_log_dir_total_bytes{dir="`+dir+`"}`], m[`strata_log_dir_free_bytes{dir="`+dir+`"}`]
	if total <= 0 || free <= 0 || free > total {
		t.Errorf("log dir total %v, free %v: want 0 < free <= total", total, free)
	}
	notAfter := m[`strata_tls_certificate_expiry_timestamp_seconds{listener="SSL"}`]
	want := certNotAfter(t, f.server.CertPEM)
	if notAfter != float64(want.Unix()) {
		t.Errorf("certificate expiry %v, want %v (%s)", notAfter, want.Unix(), want)
	}
	if _, ok := m[`strata_tls_certificate_expiry_timestamp_seconds{listener="PLAINTEXT"}`]; ok {
		t.Error("a PLAINTEXT listener reports a certificate expiry")
	}
}

// certNotAfter is the NotAfter of the first certificate in certPEM.
func certNotAfter(t testing.TB, certPEM []byte) time.Time {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatal("no PEM block")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c.NotAfter
}

// TestTieredCountersStartAtZero: a tiered topic's upload, error, remote
// read, deletion and orphan-sweep counters are on /metrics at 0 from its first manifest
// on, before anything was uploaded, so rates and alerts see them.
func TestTieredCountersStartAtZero(t *testing.T) {
	tb := tieredBroker(t)
	tb.createTopic("quiet", 1, tieredTopicConfigs())
	p := tb.srv.topics.partition("quiet", 0)
	waitFor(t, 10*time.Second, "the manifest", func() bool { return p.remote.manifest.Load() != nil })
	m := tb.scrape()
	for _, name := range []string{"strata_remote_uploaded_bytes_total", "strata_remote_upload_errors_total", "strata_remote_fetch_bytes_total", "strata_remote_deleted_bytes_total", "strata_remote_orphans_deleted_total"} {
		series := name + `{topic="quiet"}`
		if v, ok := m[series]; !ok || v != 0 {
			t.Errorf("%s = %v (present %v), want 0", series, v, ok)
		}
	}
}
