package cluster

import (
	"fmt"
	"maps"
)

// Finalized features (KIP-584, KIP-778): cluster-wide levels that clients
// read from ApiVersions (v3+) to choose behaviour, changed only by an
// UpdateFeatures record. A feature at level 0 is disabled and absent from
// the finalized map.

// The features the state machine knows.
const (
	// MetadataVersionFeature is Kafka's metadata.version. Strata's metadata
	// log has its own format, so no level changes what Strata does: the
	// level is recorded and reported for clients and tools.
	MetadataVersionFeature = "metadata.version"
	// KRaftVersionFeature is kraft.version; 1 (KIP-853 dynamic voters) is
	// not implemented: the quorum's voters are static.
	KRaftVersionFeature = "kraft.version"
	// TransactionVersionFeature is transaction.version. 1 (flexible
	// __transaction_state values) is not wired to the coordinator and 2
	// (KIP-890 part 2: an epoch bump per transaction, implicit
	// AddPartitionsToTxn through Produce v12) is not implemented, so only 0.
	TransactionVersionFeature = "transaction.version"
	// GroupVersionFeature is group.version; 1 enables the consumer group
	// protocol (KIP-848).
	GroupVersionFeature = "group.version"
)

// Kafka's metadata.version levels at the ends of the supported range.
const (
	// MetadataVersion3_3IV3 is 3.3-IV3, the lowest level Kafka 4 accepts.
	MetadataVersion3_3IV3 int16 = 7
	// MetadataVersion4_0IV3 is 4.0-IV3 (KIP-1075: ListOffsets v10), the
	// latest production level of Kafka 4.0.
	MetadataVersion4_0IV3 int16 = 25
)

// FeatureRange is an inclusive range of feature levels.
type FeatureRange struct {
	Min int16 `json:"min"`
	Max int16 `json:"max"`
}

// Contains reports whether level is in r.
func (r FeatureRange) Contains(level int16) bool { return level >= r.Min && level <= r.Max }

// knownFeatures are the levels this version of the state machine can
// finalize. A node may support less (group.version with the consumer
// protocol disabled): the broker checks its own ranges before proposing.
var knownFeatures = map[string]FeatureRange{
	MetadataVersionFeature:    {Min: MetadataVersion3_3IV3, Max: MetadataVersion4_0IV3},
	KRaftVersionFeature:       {Min: 0, Max: 0},
	TransactionVersionFeature: {Min: 0, Max: 0},
	GroupVersionFeature:       {Min: 0, Max: 1},
}

// defaultFeatureLevels are the finalized levels of a state no
// UpdateFeatures record has changed: new clusters and clusters created
// before feature records existed. They are part of the log format (a
// replayed log must reach the same levels): never change them; a future
// default for new clusters must be written into the log instead.
var defaultFeatureLevels = map[string]int16{
	MetadataVersionFeature: MetadataVersion4_0IV3,
	GroupVersionFeature:    1,
}

// KnownFeatures returns the features the state machine can finalize and
// their level ranges (a copy).
func KnownFeatures() map[string]FeatureRange { return maps.Clone(knownFeatures) }

// DefaultFeatureLevels returns the finalized levels of a state that no
// UpdateFeatures has changed (a copy).
func DefaultFeatureLevels() map[string]int16 { return maps.Clone(defaultFeatureLevels) }

// FinalizedFeatures returns the finalized feature levels of s (a copy):
// those UpdateFeatures records set, or DefaultFeatureLevels while none has.
// Disabled features (level 0) are absent.
func (s State) FinalizedFeatures() map[string]int16 {
	if s.FeaturesEpoch == 0 {
		return DefaultFeatureLevels()
	}
	return maps.Clone(s.Features)
}

// FeatureLevel returns the finalized level of one feature (0: disabled).
func (s State) FeatureLevel(name string) int16 {
	if s.FeaturesEpoch == 0 {
		return defaultFeatureLevels[name]
	}
	return s.Features[name]
}

// FeatureUpdate is one feature's new level in an UpdateFeatures record.
type FeatureUpdate struct {
	Feature string `json:"feature"`
	// Level is the new finalized level; 0 disables the feature.
	Level int16 `json:"level"`
	// Downgrade marks a downgrade (Kafka's SAFE_DOWNGRADE or
	// UNSAFE_DOWNGRADE): Level must not be above the finalized level.
	// Without it Level must not be below it. Every downgrade the state
	// machine accepts is lossless: no stored metadata depends on a level.
	Downgrade bool `json:"downgrade,omitempty"`
}

// UpdateFeatures changes finalized feature levels (Kafka's UpdateFeatures,
// KIP-584). It applies as a whole or not at all: every update must name a
// known feature, a level the state machine supports, and move in the
// direction its Downgrade flag says. A record that changes a level bumps
// State.FeaturesEpoch; one that changes nothing leaves the state as it is.
type UpdateFeatures struct {
	Updates []FeatureUpdate `json:"updates"`
}

// maxFeatureNameLen bounds a feature name in a record.
const maxFeatureNameLen = 255

// Type implements Record.
func (UpdateFeatures) Type() RecordType { return TypeUpdateFeatures }

// Validate implements Record. Names and levels are checked against the
// known features by Apply, so a record of a newer version is rejected (not
// undecodable) by an older node.
func (r UpdateFeatures) Validate() error {
	if len(r.Updates) == 0 {
		return invalid("update features: no updates")
	}
	seen := make(map[string]bool, len(r.Updates))
	for _, u := range r.Updates {
		if u.Feature == "" || len(u.Feature) > maxFeatureNameLen {
			return invalid("update features: feature name %q", u.Feature)
		}
		if u.Level < 0 {
			return invalid("update features: %s level %d", u.Feature, u.Level)
		}
		if seen[u.Feature] {
			return invalid("update features: %s named twice", u.Feature)
		}
		seen[u.Feature] = true
	}
	return nil
}

// Rejections of UpdateFeatures. Each wraps ErrRejected.
var (
	// ErrUnknownFeature: a feature the state machine does not know.
	ErrUnknownFeature = fmt.Errorf("%w: unknown feature", ErrRejected)
	// ErrUnsupportedFeatureLevel: a level outside the feature's range
	// (for metadata.version, 0 too: it cannot be disabled).
	ErrUnsupportedFeatureLevel = fmt.Errorf("%w: unsupported feature level", ErrRejected)
	// ErrFeatureDowngrade: a level below the finalized one without
	// Downgrade set.
	ErrFeatureDowngrade = fmt.Errorf("%w: feature downgrade without the downgrade flag", ErrRejected)
	// ErrFeatureUpgradeAsDowngrade: a level above the finalized one with
	// Downgrade set.
	ErrFeatureUpgradeAsDowngrade = fmt.Errorf("%w: feature upgrade marked as a downgrade", ErrRejected)
)

// CheckFeatureUpdate reports whether u may apply to s on its own: the
// feature is known, the level in its range, and the change in the
// direction u asks for. Apply checks every update of a record this way.
func CheckFeatureUpdate(s State, u FeatureUpdate) error {
	r, ok := knownFeatures[u.Feature]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownFeature, u.Feature)
	}
	if !r.Contains(u.Level) {
		return fmt.Errorf("%w: %s supports levels %d to %d, not %d", ErrUnsupportedFeatureLevel, u.Feature, r.Min, r.Max, u.Level)
	}
	cur := s.FeatureLevel(u.Feature)
	switch {
	case u.Level < cur && !u.Downgrade:
		return fmt.Errorf("%w: %s is at %d, %d is lower", ErrFeatureDowngrade, u.Feature, cur, u.Level)
	case u.Level > cur && u.Downgrade:
		return fmt.Errorf("%w: %s is at %d, %d is higher", ErrFeatureUpgradeAsDowngrade, u.Feature, cur, u.Level)
	}
	return nil
}

func applyUpdateFeatures(s State, r UpdateFeatures) (State, error) {
	levels := s.FinalizedFeatures()
	changed := false
	for _, u := range r.Updates {
		if err := CheckFeatureUpdate(s, u); err != nil {
			return s, err
		}
		if levels[u.Feature] == u.Level {
			continue
		}
		changed = true
		if u.Level == 0 {
			delete(levels, u.Feature)
		} else {
			levels[u.Feature] = u.Level
		}
	}
	if !changed {
		return s, nil
	}
	s.Features = levels
	s.FeaturesEpoch++
	return s, nil
}
