package broker

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/broker/console"
)

// mountConsole serves the web console and its /api/v1 API on the admin
// listener (broker/console). The console is a Kafka client of this node's
// inter-broker listener with the node's own identity, as the lag API's
// questions to the cluster are (lag_remote.go); who may use it is decided
// by the admin listener's guard (admin_http_security.go). Its shared client
// closes when the server stops.
func (s *Server) mountConsole(mux *http.ServeMux) {
	if len(s.listeners) == 0 {
		return
	}
	connect, err := s.consoleConnect()
	if err != nil {
		// The connectors page then says no worker is configured.
		s.logger.Error("console: Connect REST client", "err", err)
		connect = nil
	}
	c := console.New(console.Config{
		NewClient: func(opts ...kgo.Opt) (*kgo.Client, error) {
			base := append([]kgo.Opt{kgo.SeedBrokers(s.interBrokerSeed()), kgo.DialTimeout(2 * time.Second)}, s.interBrokerOpts()...)
			return kgo.NewClient(append(base, opts...)...)
		},
		NodeID: s.cfg.NodeID,
		Logger: s.logger.With("component", "console"),
		// Connectors and stream jobs (console_connect.go); the jobs
		// running in this process register on the default registry.
		Connect:       connect,
		StreamJobs:    s.consoleStreamJobs,
		StreamMetrics: prometheus.DefaultGatherer,
		GroupLag:      s.consoleGroupLag,
		RemoteLog:     s.remoteLogState,
	})
	c.Mount(mux)
	s.goTask(func() { <-s.ctx.Done(); c.Close() })
}

// consoleGroupLag is the lag evaluator's view of a group for the console:
// what GET /v1/groups/{group}/lag answers (lag_http.go).
func (s *Server) consoleGroupLag(ctx context.Context, group string) (console.GroupLag, error) {
	if s.lag == nil {
		return console.GroupLag{}, console.ErrGroupNotFound
	}
	gl, err := s.lag.groupLagByName(ctx, group)
	if errors.Is(err, errGroupNotFound) {
		return console.GroupLag{}, console.ErrGroupNotFound
	}
	if err != nil {
		return console.GroupLag{}, err
	}
	out := console.GroupLag{Status: gl.Status.String(), Severity: gl.Severity.String()}
	for _, p := range gl.Partitions {
		pl := console.PartitionLag{Topic: p.Topic, Partition: p.Partition, Status: p.Status.String(), LagSeconds: -1}
		if p.LagSeconds != nil {
			pl.LagSeconds = *p.LagSeconds
		}
		out.Partitions = append(out.Partitions, pl)
	}
	return out, nil
}

// remoteLogState is a tiered partition's remote segments (bytes, end) by
// this node's copy of its manifest (strata_remote_log_size_bytes).
func (s *Server) remoteLogState(topic string, partition int32) (console.RemoteLogState, bool) {
	p := s.topics.partition(topic, partition)
	if p == nil {
		return console.RemoteLogState{}, false
	}
	m := p.remote.manifest.Load()
	if m == nil {
		return console.RemoteLogState{}, false
	}
	return console.RemoteLogState{Bytes: m.Bytes(), NextOffset: m.NextOffset()}, true
}
