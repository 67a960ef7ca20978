package cluster

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"testing"
)

// checkFeatureInvariants fails t unless every finalized level of s is a
// non-zero level of a known feature and metadata.version is set.
func checkFeatureInvariants(t *testing.T, s State) {
	t.Helper()
	levels := s.FinalizedFeatures()
	if _, ok := levels[MetadataVersionFeature]; !ok {
		t.Fatalf("no metadata.version in %v", levels)
	}
	for name, level := range levels {
		r, ok := knownFeatures[name]
		if !ok || level == 0 || !r.Contains(level) {
			t.Fatalf("finalized %s=%d outside the known levels", name, level)
		}
	}
}

func features(updates ...FeatureUpdate) UpdateFeatures { return UpdateFeatures{Updates: updates} }

func upgrade(name string, level int16) FeatureUpdate {
	return FeatureUpdate{Feature: name, Level: level}
}

func downgrade(name string, level int16) FeatureUpdate {
	return FeatureUpdate{Feature: name, Level: level, Downgrade: true}
}

func TestFeaturesDefaultUntilFirstUpdate(t *testing.T) {
	s := scenarioState(t)
	want := map[string]int16{MetadataVersionFeature: MetadataVersion4_0IV3, GroupVersionFeature: 1}
	if got := s.FinalizedFeatures(); !maps.Equal(got, want) || s.FeaturesEpoch != 0 {
		t.Fatalf("fresh state: features %v epoch %d, want %v epoch 0", got, s.FeaturesEpoch, want)
	}
	// The result is a copy.
	s.FinalizedFeatures()[GroupVersionFeature] = 0
	if s.FeatureLevel(GroupVersionFeature) != 1 {
		t.Fatal("FinalizedFeatures handed out the defaults themselves")
	}
	// A state from before feature records (an old snapshot) has the defaults.
	old, err := DecodeState([]byte(`{"cluster_id":"c","next_producer_id":5}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := old.FinalizedFeatures(); !maps.Equal(got, want) {
		t.Fatalf("pre-feature snapshot: %v, want %v", got, want)
	}
}

// TestUpdateFeaturesSequence walks levels up and down and checks the
// finalized levels and the epoch after every record.
func TestUpdateFeaturesSequence(t *testing.T) {
	s := scenarioState(t)
	for i, step := range []struct {
		rec       UpdateFeatures
		want      map[string]int16
		wantEpoch int64
	}{
		// Records that change nothing leave the epoch alone.
		{features(upgrade(MetadataVersionFeature, 25)), map[string]int16{MetadataVersionFeature: 25, GroupVersionFeature: 1}, 0},
		{features(upgrade(KRaftVersionFeature, 0), upgrade(TransactionVersionFeature, 0)), map[string]int16{MetadataVersionFeature: 25, GroupVersionFeature: 1}, 0},
		{features(downgrade(MetadataVersionFeature, 21)), map[string]int16{MetadataVersionFeature: 21, GroupVersionFeature: 1}, 1},
		// Level 0 disables (removes) a feature.
		{features(downgrade(GroupVersionFeature, 0)), map[string]int16{MetadataVersionFeature: 21}, 2},
		{features(downgrade(GroupVersionFeature, 0)), map[string]int16{MetadataVersionFeature: 21}, 2},
		// One record, two features, one epoch.
		{features(upgrade(GroupVersionFeature, 1), upgrade(MetadataVersionFeature, 24)), map[string]int16{MetadataVersionFeature: 24, GroupVersionFeature: 1}, 3},
		{features(downgrade(MetadataVersionFeature, MetadataVersion3_3IV3)), map[string]int16{MetadataVersionFeature: 7, GroupVersionFeature: 1}, 4},
		// A downgrade flag with the same level is fine.
		{features(downgrade(MetadataVersionFeature, 7)), map[string]int16{MetadataVersionFeature: 7, GroupVersionFeature: 1}, 4},
		{features(upgrade(MetadataVersionFeature, MetadataVersion4_0IV3)), map[string]int16{MetadataVersionFeature: 25, GroupVersionFeature: 1}, 5},
	} {
		before := s
		beforeLevels := s.FinalizedFeatures()
		next, err := Apply(s, step.rec)
		if err != nil {
			t.Fatalf("step %d %+v: %v", i, step.rec, err)
		}
		if got := next.FinalizedFeatures(); !maps.Equal(got, step.want) || next.FeaturesEpoch != step.wantEpoch {
			t.Fatalf("step %d %+v: features %v epoch %d, want %v epoch %d", i, step.rec, got, next.FeaturesEpoch, step.want, step.wantEpoch)
		}
		if !maps.Equal(before.FinalizedFeatures(), beforeLevels) {
			t.Fatalf("step %d: Apply modified its input state's features", i)
		}
		checkFeatureInvariants(t, next)
		s = next
	}
	if len(s.Topics) != 1 || len(s.Brokers) != 3 {
		t.Fatalf("feature records touched the rest of the state: %+v", s)
	}
}

func TestUpdateFeaturesRejections(t *testing.T) {
	base := mustApply(t, scenarioState(t), features(downgrade(MetadataVersionFeature, 21)))
	for _, tc := range []struct {
		name string
		rec  UpdateFeatures
		want error
	}{
		{"unknown feature", features(upgrade("share.version", 1)), ErrUnknownFeature},
		{"transaction.version 2 (KIP-890 part 2)", features(upgrade(TransactionVersionFeature, 2)), ErrUnsupportedFeatureLevel},
		{"transaction.version 1", features(upgrade(TransactionVersionFeature, 1)), ErrUnsupportedFeatureLevel},
		{"kraft.version 1 (KIP-853)", features(upgrade(KRaftVersionFeature, 1)), ErrUnsupportedFeatureLevel},
		{"group.version 2", features(upgrade(GroupVersionFeature, 2)), ErrUnsupportedFeatureLevel},
		{"metadata.version above the range", features(upgrade(MetadataVersionFeature, 26)), ErrUnsupportedFeatureLevel},
		{"metadata.version below the range", features(downgrade(MetadataVersionFeature, 6)), ErrUnsupportedFeatureLevel},
		{"metadata.version disabled", features(downgrade(MetadataVersionFeature, 0)), ErrUnsupportedFeatureLevel},
		{"downgrade without the flag", features(upgrade(MetadataVersionFeature, 20)), ErrFeatureDowngrade},
		{"disable without the flag", features(upgrade(GroupVersionFeature, 0)), ErrFeatureDowngrade},
		{"upgrade marked as a downgrade", features(downgrade(MetadataVersionFeature, 22)), ErrFeatureUpgradeAsDowngrade},
		// All or nothing: the valid group.version change does not apply.
		{"one bad update rejects the record", features(downgrade(GroupVersionFeature, 0), upgrade(TransactionVersionFeature, 2)), ErrUnsupportedFeatureLevel},
		{"bad update first", features(upgrade("nope", 1), upgrade(MetadataVersionFeature, 25)), ErrUnknownFeature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Apply(base, tc.rec)
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrRejected) {
				t.Fatalf("err %v, want %v (a rejection)", err, tc.want)
			}
			if !reflect.DeepEqual(got, base) {
				t.Fatalf("rejected record changed the state: features %v epoch %d", got.FinalizedFeatures(), got.FeaturesEpoch)
			}
		})
	}
	// Records Validate refuses never reach the state either.
	for _, rec := range []UpdateFeatures{
		{},
		features(FeatureUpdate{Feature: GroupVersionFeature, Level: -1, Downgrade: true}),
		features(upgrade(GroupVersionFeature, 1), downgrade(GroupVersionFeature, 0)),
		features(upgrade("", 1)),
	} {
		if got, err := Apply(base, rec); !errors.Is(err, ErrInvalid) || !reflect.DeepEqual(got, base) {
			t.Errorf("%+v: err %v, want ErrInvalid and no change", rec, err)
		}
	}
}

func TestFeaturesSurviveSnapshot(t *testing.T) {
	s := mustApply(t, scenarioState(t),
		features(downgrade(GroupVersionFeature, 0), downgrade(MetadataVersionFeature, 22)),
		features(upgrade(MetadataVersionFeature, 23)))
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeState(b)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int16{MetadataVersionFeature: 23}
	if !maps.Equal(got.FinalizedFeatures(), want) || got.FeaturesEpoch != 2 {
		t.Fatalf("after a snapshot: %v epoch %d, want %v epoch 2", got.FinalizedFeatures(), got.FeaturesEpoch, want)
	}
	// The snapshot of a state with default features has no feature fields,
	// as before feature records existed.
	b, err = scenarioState(t).Encode()
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	if _, ok := fields["features"]; ok {
		t.Errorf("default state encodes features: %s", b)
	}
	for _, bad := range []string{
		`{"next_producer_id":0,"features_epoch":-1}`,
		`{"next_producer_id":0,"features_epoch":2}`,
		`{"next_producer_id":0,"features_epoch":2,"features":{"group.version":1}}`,
	} {
		if _, err := DecodeState([]byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", bad, err)
		}
	}
}

func TestCheckFeatureUpdateMatchesApply(t *testing.T) {
	s := scenarioState(t)
	for name, r := range KnownFeatures() {
		for level := r.Min - 1; level <= r.Max+1; level++ {
			for _, down := range []bool{false, true} {
				u := FeatureUpdate{Feature: name, Level: level, Downgrade: down}
				if level < 0 {
					continue
				}
				checkErr := CheckFeatureUpdate(s, u)
				_, applyErr := Apply(s, features(u))
				if (checkErr == nil) != (applyErr == nil) {
					t.Errorf("%+v: CheckFeatureUpdate %v, Apply %v", u, checkErr, applyErr)
				}
			}
		}
	}
}
