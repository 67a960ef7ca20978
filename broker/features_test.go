package broker

// Finalized features (KIP-584): ApiVersions v3+ reports them, UpdateFeatures
// (57_update_features.go) changes them through the metadata quorum.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// advertisedFeatures is what one ApiVersions response says about features.
type advertisedFeatures struct {
	supported map[string][2]int16 // name → min, max
	finalized map[string]int16
	epoch     int64
}

func featuresOf(t testing.TB, resp *kmsg.ApiVersionsResponse) advertisedFeatures {
	t.Helper()
	f := advertisedFeatures{supported: map[string][2]int16{}, finalized: map[string]int16{}, epoch: resp.FinalizedFeaturesEpoch}
	for _, s := range resp.SupportedFeatures {
		f.supported[s.Name] = [2]int16{s.MinVersion, s.MaxVersion}
	}
	for _, ff := range resp.FinalizedFeatures {
		if ff.MinVersionLevel != ff.MaxVersionLevel {
			t.Errorf("finalized %s: min level %d, max level %d; Kafka sends min = max", ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel)
		}
		f.finalized[ff.Name] = ff.MaxVersionLevel
	}
	return f
}

func apiVersionsAt(t testing.TB, c *rawConn, version int16) *kmsg.ApiVersionsResponse {
	t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = version
	req.ClientSoftwareName, req.ClientSoftwareVersion = "strata-test", "1.0"
	resp := roundTrip[*kmsg.ApiVersionsResponse](c, req)
	if resp.ErrorCode != 0 {
		t.Fatalf("ApiVersions v%d: %v", version, kerr.ErrorForCode(resp.ErrorCode))
	}
	return resp
}

// featuresNow reads the features the broker advertises with ApiVersions v4.
func featuresNow(t testing.TB, tb *testBroker) advertisedFeatures {
	t.Helper()
	return featuresOf(t, apiVersionsAt(t, tb.dialRaw(), 4))
}

func featureUpdate(name string, level int16, upgradeType int8) kmsg.UpdateFeaturesRequestFeatureUpdate {
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType = name, level, upgradeType
	return u
}

func updateFeaturesV1(t testing.TB, c *rawConn, validateOnly bool, updates ...kmsg.UpdateFeaturesRequestFeatureUpdate) *kmsg.UpdateFeaturesResponse {
	t.Helper()
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.Version = 1
	req.TimeoutMillis = 30000
	req.ValidateOnly = validateOnly
	req.FeatureUpdates = updates
	return roundTrip[*kmsg.UpdateFeaturesResponse](c, req)
}

var defaultFinalized = map[string]int16{"metadata.version": 25, "group.version": 1}

// TestApiVersionsFeaturesBytes: the v3 and v4 responses carry the feature
// tags, decode with kmsg to exactly the bytes sent (nothing unknown left
// over), and v3 leaves out features whose minimum is 0 (KIP-1022).
func TestApiVersionsFeaturesBytes(t *testing.T) {
	tb := startTestBroker(t)
	c := tb.dialRaw()
	wantSupported := map[int16]map[string][2]int16{
		3: {"metadata.version": {7, 25}},
		4: {"metadata.version": {7, 25}, "group.version": {0, 1}, "transaction.version": {0, 0}, "kraft.version": {0, 0}},
	}
	for _, version := range []int16{0, 1, 2, 3, 4} {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = version
		req.ClientSoftwareName, req.ClientSoftwareVersion = "strata-test", "1.0"
		corr := c.send(req)
		frame, err := c.readFrame(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		body := frame[4:] // the response header is v0: the correlation id only
		if got := int32(frame[0])<<24 | int32(frame[1])<<16 | int32(frame[2])<<8 | int32(frame[3]); got != corr {
			t.Fatalf("v%d: correlation id %d, want %d", version, got, corr)
		}
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.Version = version
		if err := resp.ReadFrom(body); err != nil {
			t.Fatalf("v%d: kmsg cannot decode the response: %v", version, err)
		}
		if again := resp.AppendTo(nil); !bytes.Equal(again, body) {
			t.Fatalf("v%d: the response re-encodes differently:\n sent %x\n kmsg %x", version, body, again)
		}
		if resp.UnknownTags.Len() != 0 {
			t.Errorf("v%d: %d unknown tags", version, resp.UnknownTags.Len())
		}
		f := featuresOf(t, resp)
		if version < 3 {
			if len(f.supported) != 0 || len(f.finalized) != 0 {
				t.Errorf("v%d carries features: %+v", version, f)
			}
			continue
		}
		if !maps.Equal(f.supported, wantSupported[version]) {
			t.Errorf("v%d supported features %v, want %v", version, f.supported, wantSupported[version])
		}
		if !maps.Equal(f.finalized, defaultFinalized) || f.epoch != 0 {
			t.Errorf("v%d finalized %v epoch %d, want %v epoch 0", version, f.finalized, f.epoch, defaultFinalized)
		}
		// The tags are really on the wire: the epoch tag (1) is present
		// even at 0, and the feature names appear in the body.
		if !bytes.Contains(body, []byte("metadata.version")) || !bytes.Contains(body, []byte("group.version")) {
			t.Errorf("v%d: feature names missing from the body %x", version, body)
		}
		if version == 3 && bytes.Contains(body, []byte("transaction.version")) {
			t.Errorf("v3 names transaction.version (minimum 0): %x", body)
		}
	}
}

// TestApiVersionsFeaturesSarama: sarama decodes the v3 feature tags.
func TestApiVersionsFeaturesSarama(t *testing.T) {
	tb := startTestBroker(t)
	b := sarama.NewBroker(tb.addr())
	if err := b.Open(saramaConfig()); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	resp, err := b.ApiVersions(&sarama.ApiVersionsRequest{Version: 3, ClientSoftwareName: "sarama", ClientSoftwareVersion: "1.61.1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.SupportedFeatures) != 1 || resp.SupportedFeatures[0].Name != "metadata.version" ||
		resp.SupportedFeatures[0].MinVersion != 7 || resp.SupportedFeatures[0].MaxVersion != 25 {
		t.Errorf("v3 supported features %+v, want metadata.version 7-25 only", resp.SupportedFeatures)
	}
	got := map[string]int16{}
	for _, f := range resp.FinalizedFeatures {
		got[f.Name] = f.MaxVersionLevel
	}
	if !maps.Equal(got, defaultFinalized) || resp.FinalizedFeaturesEpoch != 0 {
		t.Errorf("finalized %v epoch %d, want %v epoch 0", got, resp.FinalizedFeaturesEpoch, defaultFinalized)
	}
}

// TestUpdateFeaturesSarama: sarama's ClusterAdmin.UpdateFeatures (v0,
// allow_downgrade) moves metadata.version and group.version; each change
// shows at once in ApiVersions with a new epoch; refused updates change
// nothing.
func TestUpdateFeaturesSarama(t *testing.T) {
	tb := startTestBroker(t)
	admin, err := sarama.NewClusterAdmin([]string{tb.addr()}, saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()

	refused := func(what string, updates ...sarama.FeatureUpdate) {
		t.Helper()
		before := featuresNow(t, tb)
		_, err := admin.UpdateFeatures(updates)
		if !errors.Is(err, sarama.ErrInvalidUpdateVersion) {
			t.Fatalf("%s: err %v, want INVALID_UPDATE_VERSION", what, err)
		}
		if after := featuresNow(t, tb); !maps.Equal(after.finalized, before.finalized) || after.epoch != before.epoch {
			t.Fatalf("%s: refused update changed the features from %+v to %+v", what, before, after)
		}
	}
	applied := func(want map[string]int16, wantEpoch int64, updates ...sarama.FeatureUpdate) {
		t.Helper()
		results, err := admin.UpdateFeatures(updates)
		if err != nil {
			t.Fatalf("%+v: %v", updates, err)
		}
		if len(results) != len(updates) {
			t.Fatalf("%d results for %d updates", len(results), len(updates))
		}
		for _, r := range results {
			if !errors.Is(r.ErrorCode, sarama.ErrNoError) {
				t.Fatalf("%s: %v", r.Feature, r.ErrorCode)
			}
		}
		if f := featuresNow(t, tb); !maps.Equal(f.finalized, want) || f.epoch != wantEpoch {
			t.Fatalf("after %+v: finalized %v epoch %d, want %v epoch %d", updates, f.finalized, f.epoch, want, wantEpoch)
		}
	}

	refused("a downgrade without allow_downgrade", sarama.FeatureUpdate{Feature: "metadata.version", MaxVersionLevel: 21})
	refused("transaction.version 2", sarama.FeatureUpdate{Feature: "transaction.version", MaxVersionLevel: 2})
	refused("an unknown feature", sarama.FeatureUpdate{Feature: "no.such.feature", MaxVersionLevel: 1})
	refused("metadata.version above 4.0-IV3", sarama.FeatureUpdate{Feature: "metadata.version", MaxVersionLevel: 26})
	refused("allow_downgrade with a higher level", sarama.FeatureUpdate{Feature: "metadata.version", MaxVersionLevel: 25, AllowDowngrade: true},
		sarama.FeatureUpdate{Feature: "group.version", MaxVersionLevel: 2, AllowDowngrade: true})

	applied(map[string]int16{"metadata.version": 21, "group.version": 1}, 1,
		sarama.FeatureUpdate{Feature: "metadata.version", MaxVersionLevel: 21, AllowDowngrade: true})
	applied(map[string]int16{"metadata.version": 21}, 2,
		sarama.FeatureUpdate{Feature: "group.version", MaxVersionLevel: 0, AllowDowngrade: true})
	applied(map[string]int16{"metadata.version": 25, "group.version": 1}, 3,
		sarama.FeatureUpdate{Feature: "metadata.version", MaxVersionLevel: 25},
		sarama.FeatureUpdate{Feature: "group.version", MaxVersionLevel: 1})
	// Setting the current levels changes nothing, not even the epoch.
	applied(map[string]int16{"metadata.version": 25, "group.version": 1}, 3,
		sarama.FeatureUpdate{Feature: "metadata.version", MaxVersionLevel: 25})
}

// TestUpdateFeaturesV1: upgrade types, validate_only, atomicity and the
// shape of the response (results only on success, Kafka's top-level
// message naming the feature on failure).
func TestUpdateFeaturesV1(t *testing.T) {
	tb := startTestBroker(t)
	c := tb.dialRaw()
	const (
		upgrade         = 1
		safeDowngrade   = 2
		unsafeDowngrade = 3
	)

	// validate_only: a valid change is accepted and not made.
	resp := updateFeaturesV1(t, c, true, featureUpdate("metadata.version", 20, safeDowngrade), featureUpdate("group.version", 0, unsafeDowngrade))
	if resp.ErrorCode != 0 || len(resp.Results) != 2 {
		t.Fatalf("validate_only: %v, %d results", kerr.ErrorForCode(resp.ErrorCode), len(resp.Results))
	}
	if f := featuresNow(t, tb); !maps.Equal(f.finalized, defaultFinalized) || f.epoch != 0 {
		t.Fatalf("validate_only changed the features: %+v", f)
	}
	if st := tb.srv.clusterState(); st.FeaturesEpoch != 0 || st.Features != nil {
		t.Fatalf("validate_only reached the metadata state: %v epoch %d", st.Features, st.FeaturesEpoch)
	}
	// validate_only still refuses what the real request would.
	resp = updateFeaturesV1(t, c, true, featureUpdate("transaction.version", 2, upgrade))
	if resp.ErrorCode != kerr.InvalidUpdateVersion.Code {
		t.Fatalf("validate_only transaction.version 2: %v", kerr.ErrorForCode(resp.ErrorCode))
	}

	for _, tc := range []struct {
		name    string
		updates []kmsg.UpdateFeaturesRequestFeatureUpdate
		code    int16
		inMsg   string
	}{
		{"transaction.version 2", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("transaction.version", 2, upgrade)}, kerr.InvalidUpdateVersion.Code, "KIP-890 part 2"},
		{"kraft.version 1", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("kraft.version", 1, upgrade)}, kerr.InvalidUpdateVersion.Code, "kraft.version"},
		{"unknown feature", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("share.version", 1, upgrade)}, kerr.InvalidUpdateVersion.Code, "share.version"},
		{"downgrade as an upgrade", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("metadata.version", 20, upgrade)}, kerr.InvalidUpdateVersion.Code, "downgrade"},
		{"upgrade as a downgrade", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("group.version", 2, safeDowngrade)}, kerr.InvalidUpdateVersion.Code, "group.version"},
		{"disable metadata.version", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("metadata.version", 0, unsafeDowngrade)}, kerr.InvalidUpdateVersion.Code, "metadata.version"},
		{"negative level", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("group.version", -1, unsafeDowngrade)}, kerr.InvalidUpdateVersion.Code, "less than 0"},
		{"unknown upgrade type", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("metadata.version", 25, 0)}, kerr.InvalidUpdateVersion.Code, "upgrade type"},
		{"named twice", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("group.version", 1, upgrade), featureUpdate("group.version", 0, safeDowngrade)}, kerr.InvalidRequest.Code, "more than once"},
		// All or nothing: the valid metadata.version downgrade is not made.
		{"one bad update", []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("metadata.version", 20, safeDowngrade), featureUpdate("transaction.version", 2, upgrade)}, kerr.InvalidUpdateVersion.Code, "transaction.version"},
	} {
		resp := updateFeaturesV1(t, c, false, tc.updates...)
		if resp.ErrorCode != tc.code {
			t.Errorf("%s: %v, want %v", tc.name, kerr.ErrorForCode(resp.ErrorCode), kerr.ErrorForCode(tc.code))
			continue
		}
		if resp.ErrorMessage == nil || !strings.Contains(*resp.ErrorMessage, tc.inMsg) {
			t.Errorf("%s: message %v does not mention %q", tc.name, resp.ErrorMessage, tc.inMsg)
		}
		if len(resp.Results) != 0 {
			t.Errorf("%s: %d per-feature results on a failed request (Kafka sends none)", tc.name, len(resp.Results))
		}
	}
	if f := featuresNow(t, tb); !maps.Equal(f.finalized, defaultFinalized) || f.epoch != 0 {
		t.Fatalf("refused updates changed the features: %+v", f)
	}

	// A real change: both features in one record, one epoch.
	resp = updateFeaturesV1(t, c, false, featureUpdate("metadata.version", 7, unsafeDowngrade), featureUpdate("group.version", 1, upgrade))
	if resp.ErrorCode != 0 || resp.ErrorMessage != nil || len(resp.Results) != 2 {
		t.Fatalf("update: %v %v, %d results", kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage, len(resp.Results))
	}
	for i, r := range resp.Results {
		if r.ErrorCode != 0 || r.ErrorMessage != nil {
			t.Errorf("result %d: %+v", i, r)
		}
	}
	if resp.Results[0].Feature != "metadata.version" || resp.Results[1].Feature != "group.version" {
		t.Errorf("results %+v not in request order", resp.Results)
	}
	if f := featuresNow(t, tb); !maps.Equal(f.finalized, map[string]int16{"metadata.version": 7, "group.version": 1}) || f.epoch != 1 {
		t.Fatalf("after the update: %+v", f)
	}
	// An empty request is answered without a record.
	resp = updateFeaturesV1(t, c, false)
	if resp.ErrorCode != 0 || len(resp.Results) != 0 || tb.srv.clusterState().FeaturesEpoch != 1 {
		t.Fatalf("empty request: %v, %d results, epoch %d", kerr.ErrorForCode(resp.ErrorCode), len(resp.Results), tb.srv.clusterState().FeaturesEpoch)
	}
}

// TestUpdateFeaturesGroupVersionGatesConsumerProtocol: group.version 0
// takes the KIP-848 APIs away (not advertised, UNSUPPORTED_VERSION, as
// Kafka); back at 1 they are served again.
func TestUpdateFeaturesGroupVersionGatesConsumerProtocol(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("gv", 1, nil)
	c := tb.dialRaw()
	advertises := func() (heartbeat, describe bool) {
		for _, k := range apiVersionsAt(t, c, 4).ApiKeys {
			heartbeat = heartbeat || k.ApiKey == kmsg.ConsumerGroupHeartbeat.Int16()
			describe = describe || k.ApiKey == kmsg.ConsumerGroupDescribe.Int16()
		}
		return heartbeat, describe
	}
	join := func() int16 {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Version = 1
		req.Group, req.MemberID, req.MemberEpoch = "gv-group", "member-gv-1", 0
		req.RebalanceTimeoutMillis = 5000
		req.SubscribedTopicNames = []string{"gv"}
		return roundTrip[*kmsg.ConsumerGroupHeartbeatResponse](c, req).ErrorCode
	}
	describe := func() int16 {
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Version = 1
		req.Groups = []string{"gv-group"}
		return roundTrip[*kmsg.ConsumerGroupDescribeResponse](c, req).Groups[0].ErrorCode
	}
	if hb, d := advertises(); !hb || !d {
		t.Fatalf("group.version 1: heartbeat advertised %v, describe %v", hb, d)
	}
	if code := join(); code != 0 {
		t.Fatalf("join at group.version 1: %v", kerr.ErrorForCode(code))
	}

	if resp := updateFeaturesV1(t, c, false, featureUpdate("group.version", 0, 2)); resp.ErrorCode != 0 {
		t.Fatalf("group.version 0: %v %v", kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage)
	}
	if hb, d := advertises(); hb || d {
		t.Fatalf("group.version 0: heartbeat advertised %v, describe %v", hb, d)
	}
	if code := join(); code != kerr.UnsupportedVersion.Code {
		t.Fatalf("heartbeat at group.version 0: %v, want UNSUPPORTED_VERSION", kerr.ErrorForCode(code))
	}
	if code := describe(); code != kerr.UnsupportedVersion.Code {
		t.Fatalf("describe at group.version 0: %v, want UNSUPPORTED_VERSION", kerr.ErrorForCode(code))
	}
	if f := featuresNow(t, tb); f.finalized["group.version"] != 0 || f.supported["group.version"] != [2]int16{0, 1} {
		t.Fatalf("group.version 0: %+v", f)
	}

	if resp := updateFeaturesV1(t, c, false, featureUpdate("group.version", 1, 1)); resp.ErrorCode != 0 {
		t.Fatalf("group.version 1: %v %v", kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage)
	}
	if hb, d := advertises(); !hb || !d {
		t.Fatalf("group.version back at 1: heartbeat advertised %v, describe %v", hb, d)
	}
	if code := describe(); code != 0 {
		t.Fatalf("describe at group.version 1: %v", kerr.ErrorForCode(code))
	}
}

// TestFeaturesWithConsumerProtocolDisabled: with
// group.consumer.protocol.enable=false the node supports and reports
// group.version 0 only, and refuses to raise it.
func TestFeaturesWithConsumerProtocolDisabled(t *testing.T) {
	tb := startTestBroker(t, func(c *Config) { c.GroupConsumerProtocolEnable = false })
	c := tb.dialRaw()
	f := featuresOf(t, apiVersionsAt(t, c, 4))
	if f.supported["group.version"] != [2]int16{0, 0} {
		t.Errorf("supported group.version %v, want 0-0", f.supported["group.version"])
	}
	if _, ok := f.finalized["group.version"]; ok || f.finalized["metadata.version"] != 25 {
		t.Errorf("finalized %v, want metadata.version 25 and no group.version", f.finalized)
	}
	resp := updateFeaturesV1(t, c, false, featureUpdate("group.version", 1, 1))
	if resp.ErrorCode != kerr.InvalidUpdateVersion.Code || resp.ErrorMessage == nil || !strings.Contains(*resp.ErrorMessage, "group.consumer.protocol.enable") {
		t.Fatalf("group.version 1 with the protocol disabled: %v %v", kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage)
	}
}

// TestFeaturesSurviveRestart: finalized levels and their epoch come back
// from the quorum's log after a restart.
func TestFeaturesSurviveRestart(t *testing.T) {
	tb := startTestBroker(t)
	c := tb.dialRaw()
	for _, u := range []kmsg.UpdateFeaturesRequestFeatureUpdate{
		featureUpdate("metadata.version", 22, 2),
		featureUpdate("group.version", 0, 2),
		featureUpdate("metadata.version", 24, 1),
	} {
		if resp := updateFeaturesV1(t, c, false, u); resp.ErrorCode != 0 {
			t.Fatalf("%+v: %v %v", u, kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage)
		}
	}
	want := map[string]int16{"metadata.version": 24}
	if f := featuresNow(t, tb); !maps.Equal(f.finalized, want) || f.epoch != 3 {
		t.Fatalf("before the restart: %+v", f)
	}
	tb.restart()
	if f := featuresNow(t, tb); !maps.Equal(f.finalized, want) || f.epoch != 3 {
		t.Fatalf("after the restart: finalized %v epoch %d, want %v epoch 3", f.finalized, f.epoch, want)
	}
	if got := tb.srv.clusterState().FeatureLevel(cluster.GroupVersionFeature); got != 0 {
		t.Fatalf("group.version %d after the restart", got)
	}
}

// TestFeaturesAcrossNodes: an update sent to a node that is not the raft
// leader commits through the quorum; that node reports it as soon as it
// answers, the others once they apply the record.
func TestFeaturesAcrossNodes(t *testing.T) {
	c := startTestCluster(t, 3)
	leader := c.node(1).srv.member.LeaderID()
	var via *testBroker
	for _, nb := range c.nodes {
		if nb.cfg.NodeID != leader {
			via = nb
			break
		}
	}
	resp := updateFeaturesV1(t, via.dialRaw(), false, featureUpdate("metadata.version", 21, 2), featureUpdate("group.version", 0, 3))
	if resp.ErrorCode != 0 {
		t.Fatalf("update through node %d: %v %v", via.cfg.NodeID, kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage)
	}
	want := map[string]int16{"metadata.version": 21}
	if f := featuresNow(t, via); !maps.Equal(f.finalized, want) || f.epoch != 1 {
		t.Fatalf("node %d right after its answer: %+v", via.cfg.NodeID, f)
	}
	ctx := testContext(t)
	for _, nb := range c.nodes {
		if !nb.srv.waitForState(ctx, func(st cluster.State) bool { return st.FeaturesEpoch == 1 }) {
			t.Fatalf("node %d never applied the update", nb.cfg.NodeID)
		}
		if f := featuresNow(t, nb); !maps.Equal(f.finalized, want) || f.epoch != 1 {
			t.Errorf("node %d: %+v", nb.cfg.NodeID, f)
		}
	}
}

// TestUpdateFeaturesProposeErrors: how the outcome of the quorum round
// trip maps to the request's error.
func TestUpdateFeaturesProposeErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int16
	}{
		{nil, 0},
		{fmt.Errorf("apply: %w: group.version is at 0", cluster.ErrFeatureDowngrade), kerr.InvalidUpdateVersion.Code},
		{fmt.Errorf("observer: %w", cluster.ErrRejected), kerr.InvalidUpdateVersion.Code},
		{fmt.Errorf("waiting: %w", context.DeadlineExceeded), kerr.RequestTimedOut.Code},
		{&metadata.NotLeaderError{Leader: -1}, kerr.RequestTimedOut.Code},
		{metadata.ErrControllerLost, kerr.RequestTimedOut.Code},
		{metadata.ErrNoController, kerr.RequestTimedOut.Code},
		{metadata.ErrClosed, kerr.NotController.Code},
		{context.Canceled, kerr.NotController.Code},
		{errors.New("disk on fire"), kerr.UnknownServerError.Code},
	} {
		got := featureProposeResult(tc.err)
		switch {
		case tc.code == 0 && got != nil:
			t.Errorf("%v: %+v, want success", tc.err, got)
		case tc.code != 0 && (got == nil || got.code != tc.code):
			t.Errorf("%v: %+v, want %v", tc.err, got, kerr.ErrorForCode(tc.code))
		}
	}
}
