package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/strata-streaming/strata/metadata"
)

// ControllerNode is a node run with --roles controller: a voter of the
// metadata quorum and nothing else (no Kafka listener, no partitions; it
// never registers as a broker, so no replica is placed on it). Its admin
// HTTP listener answers /healthz.
type ControllerNode struct {
	node   *metadata.Node
	logger *slog.Logger
	http   *http.Server
	addr   string
}

// NewControllerNode starts the quorum member and, with cfg.HTTPListen, the
// health endpoint.
func NewControllerNode(cfg Config, logger *slog.Logger) (*ControllerNode, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(cfg.firstLogDir(), 0o755); err != nil {
		return nil, fmt.Errorf("broker: data dir: %w", err)
	}
	member, err := openMetadata(cfg, logger)
	if err != nil {
		return nil, err
	}
	node, ok := member.(*metadata.Node)
	if !ok { // --roles controller is a voter, never an observer
		member.Close()
		return nil, errors.New("broker: --roles controller must include the controller role")
	}
	c := &ControllerNode{node: node, logger: logger}
	if cfg.HTTPListen != "" {
		// Only /healthz here, open to probes; TLS as on brokers.
		guard, err := cfg.adminHTTPGuard()
		if err != nil {
			node.Close()
			return nil, err
		}
		guard.Close() // no authentication to do: drop a JWKS refresh
		ln, err := net.Listen("tcp", cfg.HTTPListen)
		if err != nil {
			node.Close()
			return nil, fmt.Errorf("broker: http listen %s: %w", cfg.HTTPListen, err)
		}
		c.addr = ln.Addr().String()
		ln = guard.Listener(ln)
		mux := http.NewServeMux()
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "ok\nrole: controller\nleader: %d\n", node.LeaderID())
		})
		c.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := c.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Error("admin http stopped", "err", err)
			}
		}()
	}
	logger.Info("strata controller running", "node_id", cfg.NodeID, "raft", cfg.ControllerListen, "http", c.addr, "cluster_id", node.State().ClusterID)
	return c, nil
}

// HTTPAddr is the bound admin HTTP address ("" if disabled).
func (c *ControllerNode) HTTPAddr() string { return c.addr }

// Node is the node's quorum member.
func (c *ControllerNode) Node() *metadata.Node { return c.node }

// Close stops the HTTP listener and the quorum member.
func (c *ControllerNode) Close() error {
	if c.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = c.http.Shutdown(ctx)
		cancel()
	}
	err := c.node.Close()
	c.logger.Info("strata controller stopped")
	return err
}
