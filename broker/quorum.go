package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/strata-streaming/strata/metadata"
)

// The broker's metadata lives in the raft quorum of package metadata. A
// node with no --controllers is a one-voter quorum of itself: single-node
// mode runs the same raft log, state machine and proposal path as a
// cluster.

// metadataDir is where the raft log, its snapshots and (before the quorum)
// the FileStore document live.
const metadataDir = "__metadata"

// legacyMetadataFile is FileStore's document; a data directory that has
// one and no raft log yet is migrated into the quorum at start.
const legacyMetadataFile = "cluster-metadata.json"

// openMetadata starts this node's quorum member (a *metadata.Node, or a
// *metadata.Observer with --roles broker), waits for the cluster id, and
// imports a pre-quorum FileStore document on first start. The caller
// closes the member.
func openMetadata(cfg Config, logger *slog.Logger) (metadata.Member, error) {
	dir := filepath.Join(cfg.firstLogDir(), metadataDir)
	voters, err := metadata.ParseVoters(cfg.ControllerQuorumVoters)
	if err != nil {
		return nil, fmt.Errorf("broker: --controllers: %w", err)
	}
	roles, err := metadata.ParseRoles(cfg.ProcessRoles)
	if err != nil {
		return nil, fmt.Errorf("broker: --roles: %w", err)
	}
	raftTLS, err := cfg.controllerTLS()
	if err != nil {
		return nil, err
	}
	if roles.Broker && !roles.Controller {
		// A broker-only node follows the controllers' committed log as an
		// observer; it keeps no raft log of its own.
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		o, err := metadata.OpenObserver(ctx, metadata.ObserverConfig{NodeID: cfg.NodeID, Controllers: voters, Logger: logger, TLS: raftTLS})
		if err != nil {
			return nil, fmt.Errorf("broker: --roles broker: %w", err)
		}
		return o, nil
	}
	if cfg.ControllerJoin && (!roles.Controller || len(voters) == 0 || cfg.ControllerListen == "" && !slices.ContainsFunc(voters, func(v metadata.Voter) bool { return v.ID == cfg.NodeID })) {
		return nil, errors.New("broker: --controller-join needs --roles with controller, --controllers naming the current voters and --controller-listen")
	}
	if !cfg.ControllerJoin && roles.Controller && !slices.ContainsFunc(voters, func(v metadata.Voter) bool { return v.ID == cfg.NodeID }) && len(voters) > 0 {
		return nil, fmt.Errorf("broker: --node-id %d is not among --controllers", cfg.NodeID)
	}

	raftDir := filepath.Join(dir, "raft")
	legacy := filepath.Join(dir, legacyMetadataFile)
	var imported *metadata.FileStore
	if _, err := os.Stat(raftDir); errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(legacy); err == nil {
			if imported, err = metadata.OpenFileStore(dir); err != nil {
				return nil, fmt.Errorf("broker: reading %s to migrate it: %w", legacy, err)
			}
		}
	}
	mcfg := metadata.Config{
		NodeID: cfg.NodeID, Voters: voters, Dir: raftDir, ListenAddr: cfg.ControllerListen, Logger: logger, TLS: raftTLS,
		Join:                         cfg.ControllerJoin,
		SessionTimeout:               time.Duration(cfg.BrokerSessionTimeoutMs) * time.Millisecond,
		ControllerInterval:           100 * time.Millisecond,
		DisableAutoLeaderRebalance:   !cfg.AutoLeaderRebalanceEnable,
		LeaderImbalanceCheckInterval: time.Duration(cfg.LeaderImbalanceCheckIntervalSeconds) * time.Second,
	}
	if imported != nil {
		mcfg.ClusterID = imported.ClusterID() // keep the cluster's id
	}
	timeout := metadataStartTimeout
	if cfg.ControllerJoin {
		// A joining controller hears nothing until AddRaftVoter adds it.
		timeout = cfg.ControllerJoinTimeout
		if timeout <= 0 {
			timeout = 10 * time.Minute
		}
		logger.Info("joining the metadata quorum: waiting to be added (strata quorum add-voter)", "node_id", cfg.NodeID, "raft", cfg.ControllerListen)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	node, err := metadata.OpenNode(ctx, mcfg)
	if err != nil {
		return nil, fmt.Errorf("broker: metadata quorum: %w", err)
	}
	if imported != nil {
		if err := migrateFileStore(ctx, imported, newMetadataClient(node)); err != nil {
			node.Close()
			return nil, fmt.Errorf("broker: migrating %s into the metadata quorum: %w", legacy, err)
		}
		if err := os.Rename(legacy, legacy+".migrated"); err != nil {
			node.Close()
			return nil, fmt.Errorf("broker: %w", err)
		}
		logger.Info("metadata migrated into the raft quorum", "from", legacy, "topics", len(imported.Topics()))
	}
	return node, nil
}

// metadataStartTimeout bounds how long a starting node waits for its
// quorum to elect a leader and apply the cluster id (a majority of the
// voters must be up).
var metadataStartTimeout = 30 * time.Second

// migrateFileStore copies topics (ids, partition counts, configs) and the
// producer-id counter into a fresh quorum, placing every partition on this
// node (the document is a single node's). Topics already there (a
// migration interrupted before the rename) are skipped.
func migrateFileStore(ctx context.Context, from *metadata.FileStore, to *metadataClient) error {
	for _, t := range from.Topics() {
		st := to.member.State()
		if _, ok := st.Topics[t.Name]; ok {
			continue
		}
		placement, err := placeReplicas(st, to.member.ID(), int(t.Partitions()), 1)
		if err != nil {
			return fmt.Errorf("topic %s: %w", t.Name, err)
		}
		if _, err := to.createTopic(ctx, t.Name, t.ID, placement, t.Configs); err != nil {
			return fmt.Errorf("topic %s: %w", t.Name, err)
		}
	}
	if next, cur := from.NextProducerID(), to.member.State().NextProducerID; next > cur {
		if _, err := to.allocateProducerIDs(ctx, next-cur); err != nil {
			return err
		}
	}
	return nil
}
