// Package metadata owns cluster metadata: which topics exist, their topic IDs,
// partition counts, leader epochs and configs, the cluster ID and the
// allocation of idempotent producer IDs.
//
// Today a single node keeps this in one JSON document (FileStore), rewritten
// atomically on every change (write temp file, fsync, rename, fsync dir). The
// broker only sees the Store interface, so the etcd-raft quorum of the
// replication issue replaces FileStore without touching the broker's handlers.
//
// metadata never imports broker.
package metadata
