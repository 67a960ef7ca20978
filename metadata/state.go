package metadata

import "github.com/strata-streaming/strata/metadata/cluster"

// The metadata state machine lives in metadata/cluster (pure: no I/O, no
// clock); these names make it reachable as metadata.State and friends.
type (
	// State is the cluster metadata at one applied log position.
	State = cluster.State
	// Record is one change to the State.
	Record = cluster.Record
)

// Apply returns the state after rec (see cluster.Apply).
func Apply(s State, rec Record) (State, error) { return cluster.Apply(s, rec) }
