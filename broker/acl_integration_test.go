package broker

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/strata-streaming/strata/internal/tlsconf"
)

// startACLBroker is a broker with authorizer.class.name set (under
// Kafka's class name), one SASL_PLAINTEXT listener with PLAIN users admin
// (a super user), alice, bob and carol, and auto-creation on.
func startACLBroker(t *testing.T) *testBroker {
	t.Helper()
	return startTestBroker(t, func(c *Config) {
		mustSet(t, c,
			"listeners", "SASL_PLAINTEXT://127.0.0.1:0",
			"sasl.enabled.mechanisms", "PLAIN",
			"listener.name.sasl_plaintext.plain.sasl.jaas.config",
			`org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-pw" user_admin="admin-pw" user_alice="alice-pw" user_bob="bob-pw" user_carol="carol-pw";`,
			"authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
			"super.users", "User:admin;User:ops",
			"connection.failed.authentication.delay.ms", "1",
		)
	})
}

func plainUser(user string) kgo.Opt {
	return kgo.SASL(plain.Auth{User: user, Pass: user + "-pw"}.AsMechanism())
}

// aclClient is a franz-go client of user that gives up on errors quickly.
func aclClient(t *testing.T, tb *testBroker, user string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(tb.srv.ListenerAddr("SASL_PLAINTEXT")), plainUser(user),
		kgo.RetryTimeout(5 * time.Second), kgo.RecordRetries(3), kgo.AllowAutoTopicCreation()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// TestACLs: kadm creates ACLs as the super user; alice produces and
// consumes as a group member with exactly the ACLs Kafka's docs list,
// sees only the topics she may describe, and is refused with Kafka's
// error codes everywhere else; bob, with no ACL, is refused everything;
// DENY beats ALLOW, host-bound ACLs bind, deleting an ACL takes effect on
// open connections, sarama's admin reads the same ACLs, and they survive
// a restart.
func TestACLs(t *testing.T) {
	tb := startACLBroker(t)
	ctx := testContext(t)
	adminCl := aclClient(t, tb, "admin")
	admin := kadm.NewClient(adminCl)
	if _, err := admin.CreateTopics(ctx, 1, 1, nil, "orders", "logs-app", "logs-secret", "hidden"); err != nil {
		t.Fatal(err)
	}
	mustCreateACLs := func(b *kadm.ACLBuilder) {
		t.Helper()
		res, err := admin.CreateACLs(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("create ACL %+v: %v", r, r.Err)
			}
		}
	}
	mustCreateACLs(kadm.NewACLs().Allow("User:alice").Topics("orders").Operations(kadm.OpRead, kadm.OpWrite))
	mustCreateACLs(kadm.NewACLs().Allow("User:alice").Topics("logs-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpWrite, kadm.OpRead))
	mustCreateACLs(kadm.NewACLs().Deny("User:alice").Topics("logs-secret").Operations(kadm.OpAll))
	mustCreateACLs(kadm.NewACLs().Allow("User:alice").Groups("g-alice").Operations(kadm.OpRead))
	mustCreateACLs(kadm.NewACLs().Allow("User:alice").TransactionalIDs("tx-alice").Operations(kadm.OpWrite))
	mustCreateACLs(kadm.NewACLs().Allow("User:carol").AllowHosts("10.9.9.9").Topics("orders").Operations(kadm.OpAll))

	// alice: idempotent produce (KIP-679: WRITE on a topic suffices), a
	// group consume with commits, a transaction.
	alice := aclClient(t, tb, "alice")
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("o1")}, &kgo.Record{Topic: "logs-app", Value: []byte("l1")}).FirstErr(); err != nil {
		t.Fatalf("alice produce: %v", err)
	}
	consumer := aclClient(t, tb, "alice", kgo.ConsumerGroup("g-alice"), kgo.ConsumeTopics("orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	var got []string
	for len(got) == 0 {
		fs := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("alice consume: %v (errors %v)", err, fs.Errors())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("alice fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("alice commit: %v", err)
	}
	txnClient := aclClient(t, tb, "alice", kgo.TransactionalID("tx-alice"))
	if err := txnClient.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txnClient.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("in-txn")}).FirstErr(); err != nil {
		t.Fatalf("alice transactional produce: %v", err)
	}
	if err := txnClient.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("alice commit transaction: %v", err)
	}

	// What alice may see: the topics she has an ACL on, not the others.
	aliceAdm := kadm.NewClient(alice)
	md, err := aliceAdm.Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if names := md.Topics.Names(); !slices.Equal(sorted(names), []string{"logs-app", "orders"}) {
		t.Fatalf("alice lists topics %v, want logs-app and orders", names)
	}
	// KIP-430: what alice may do to orders (READ, WRITE and the DESCRIBE
	// they imply) and to the cluster (IDEMPOTENT_WRITE, by KIP-679's rule,
	// is not reported: she has no cluster ACL).
	mreq := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("orders")
	mreq.Topics, mreq.IncludeTopicAuthorizedOperations = append(mreq.Topics, mt), true
	if r, err := mreq.RequestWith(ctx, alice); err != nil || r.Topics[0].AuthorizedOperations != 1<<3|1<<4|1<<8 {
		t.Fatalf("alice's authorized operations on orders: %v %+v", err, r)
	}
	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.IncludeClusterAuthorizedOperations = true
	if r, err := dc.RequestWith(ctx, alice); err != nil || r.ClusterAuthorizedOperations != 0 {
		t.Fatalf("alice's authorized operations on the cluster: %v %+v", err, r)
	}
	if r, err := dc.RequestWith(ctx, adminCl); err != nil || r.ClusterAuthorizedOperations != 1<<5|1<<7|1<<8|1<<9|1<<10|1<<11|1<<12 {
		t.Fatalf("the super user's authorized operations on the cluster: %v %+v", err, r)
	}
	// Refusals, each with Kafka's code.
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "logs-secret", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice produce to logs-secret (DENY ALL over a prefixed ALLOW): %v", err)
	}
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "hidden", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice produce to hidden: %v", err)
	}
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "not-yet-created", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice auto-creating a topic: %v", err)
	}
	if ct, err := aliceAdm.CreateTopic(ctx, 1, 1, nil, "alice-made"); !errors.Is(err, kerr.TopicAuthorizationFailed) && !errors.Is(ct.Err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice CreateTopics: %v %v", err, ct.Err)
	}
	if cr, err := aliceAdm.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("hidden").Operations(kadm.OpAll)); err != nil || !errors.Is(cr[0].Err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("alice granting herself an ACL: %v %+v", err, cr)
	}
	if dr, err := describeAllACLs().RequestWith(ctx, alice); err != nil || dr.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice describing ACLs: %v %+v", err, dr)
	}
	dt, err := aliceAdm.DeleteTopics(ctx, "orders")
	if err != nil || !errors.Is(dt["orders"].Err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice deleting orders: %v %v", err, dt["orders"].Err)
	}
	other := aclClient(t, tb, "alice", kgo.ConsumerGroup("g-other"), kgo.ConsumeTopics("orders"))
	if err := other.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	offs, err := aliceAdm.FetchOffsets(ctx, "g-other")
	if !errors.Is(err, kerr.GroupAuthorizationFailed) && !errors.Is(offs.Error(), kerr.GroupAuthorizationFailed) {
		t.Fatalf("alice fetching g-other's offsets: %v %v", err, offs.Error())
	}
	txnOther := aclClient(t, tb, "alice", kgo.TransactionalID("tx-other"))
	err = txnOther.BeginTransaction() // kgo may already have asked for a producer id
	if err == nil {
		err = txnOther.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("x")}).FirstErr()
	}
	if !errors.Is(err, kerr.TransactionalIDAuthorizationFailed) {
		t.Fatalf("alice producing under tx-other: %v", err)
	}
	// An API without its own check needs ALTER on the cluster.
	uf := kmsg.NewPtrUpdateFeaturesRequest()
	ufResp, err := uf.RequestWith(ctx, alice)
	if err != nil || ufResp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice UpdateFeatures: %v %+v", err, ufResp)
	}
	// Quorum membership (KIP-853) needs ALTER on the cluster.
	av := kmsg.NewPtrAddRaftVoterRequest()
	av.VoterID = 9
	if r, err := av.RequestWith(ctx, alice); err != nil || r.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice AddRaftVoter: %v %+v", err, r)
	}
	rv := kmsg.NewPtrRemoveRaftVoterRequest()
	if r, err := rv.RequestWith(ctx, alice); err != nil || r.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice RemoveRaftVoter: %v %+v", err, r)
	}
	// The operators' admin surface without a cluster ACL: moving a
	// replica between log dirs and elections need ALTER on the cluster,
	// DescribeLogDirs and DescribeQuorum DESCRIBE on it; DescribeProducers
	// needs READ on the topic.
	ar := kmsg.NewPtrAlterReplicaLogDirsRequest()
	ard := kmsg.NewAlterReplicaLogDirsRequestDir()
	ard.Dir = tb.srv.cfg.LogDirs()[0]
	ardt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
	ardt.Topic, ardt.Partitions = "orders", []int32{0}
	ard.Topics = append(ard.Topics, ardt)
	ar.Dirs = append(ar.Dirs, ard)
	if r, err := ar.RequestWith(ctx, alice); err != nil || len(r.Topics) != 1 || r.Topics[0].Partitions[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice AlterReplicaLogDirs: %v %+v", err, r)
	}
	// (kgo merges a sharded DescribeLogDirs; ask the one broker.)
	if r, err := kmsg.NewPtrDescribeLogDirsRequest().RequestWith(ctx, alice.Broker(int(tb.srv.cfg.NodeID))); err != nil || r.ErrorCode != kerr.ClusterAuthorizationFailed.Code || len(r.Dirs) != 0 {
		t.Fatalf("alice DescribeLogDirs: %v %+v", err, r)
	}
	if r, err := kmsg.NewPtrElectLeadersRequest().RequestWith(ctx, alice); err != nil || r.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice ElectLeaders: %v %+v", err, r)
	}
	dq := kmsg.NewPtrDescribeQuorumRequest()
	dqt := kmsg.NewDescribeQuorumRequestTopic()
	dqt.Topic = "__cluster_metadata"
	dqt.Partitions = append(dqt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	dq.Topics = append(dq.Topics, dqt)
	if r, err := dq.RequestWith(ctx, alice); err != nil || r.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice DescribeQuorum: %v %+v", err, r)
	}
	dp := kmsg.NewPtrDescribeProducersRequest()
	dpt := kmsg.NewDescribeProducersRequestTopic()
	dpt.Topic, dpt.Partitions = "hidden", []int32{0}
	dp.Topics = append(dp.Topics, dpt)
	if r, err := dp.RequestWith(ctx, alice.Broker(int(tb.srv.cfg.NodeID))); err != nil || r.Topics[0].Partitions[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("alice DescribeProducers on hidden: %v %+v", err, r)
	}
	if ps, err := aliceAdm.DescribeProducers(ctx, kadm.TopicsSet{"orders": {0: {}}}); err != nil || ps["orders"].Partitions[0].Err != nil {
		t.Fatalf("alice DescribeProducers on orders (READ granted): %v %+v", err, ps)
	}
	// UpdateRaftVoter, a request between controllers, needs CLUSTER_ACTION.
	uv := kmsg.NewPtrUpdateRaftVoterRequest()
	if r, err := uv.RequestWith(ctx, alice); err != nil || r.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice UpdateRaftVoter: %v %+v", err, r)
	}
	// The share coordinator's state APIs are between brokers: CLUSTER_ACTION.
	rs := kmsg.NewPtrReadShareGroupStateRequest()
	rs.GroupID = "g-alice"
	rst := kmsg.NewReadShareGroupStateRequestTopic()
	rst.Partitions = append(rst.Partitions, kmsg.NewReadShareGroupStateRequestTopicPartition())
	rs.Topics = append(rs.Topics, rst)
	if r, err := rs.RequestWith(ctx, alice.Broker(int(tb.srv.cfg.NodeID))); err != nil || r.Topics[0].Partitions[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice ReadShareGroupState: %v %+v", err, r)
	}
	ws := kmsg.NewPtrWriteShareGroupStateRequest()
	ws.GroupID = "g-alice"
	wst := kmsg.NewWriteShareGroupStateRequestTopic()
	wsp := kmsg.NewWriteShareGroupStateRequestTopicPartition()
	wst.Partitions = append(wst.Partitions, wsp)
	ws.Topics = append(ws.Topics, wst)
	if r, err := ws.RequestWith(ctx, alice.Broker(int(tb.srv.cfg.NodeID))); err != nil || r.Topics[0].Partitions[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alice WriteShareGroupState: %v %+v", err, r)
	}
	if r, err := ws.RequestWith(ctx, adminCl.Broker(int(tb.srv.cfg.NodeID))); err != nil || r.Topics[0].Partitions[0].ErrorCode == kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("the super user's WriteShareGroupState: %v %+v", err, r)
	}

	// bob has no ACL: not even an idempotent producer id.
	bob := aclClient(t, tb, "bob")
	if err := bob.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.ClusterAuthorizationFailed) && !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("bob produce: %v", err)
	}
	initPID := kmsg.NewPtrInitProducerIDRequest()
	initPID.TransactionTimeoutMillis = -1
	if r, err := initPID.RequestWith(ctx, bob); err != nil || r.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("bob InitProducerId: %v %+v", err, r)
	}
	bobAdm := kadm.NewClient(bob)
	if md, err := bobAdm.Metadata(ctx); err != nil || len(md.Topics) != 0 {
		t.Fatalf("bob lists topics %v (%v), want none", md.Topics.Names(), err)
	}
	bobGroup := aclClient(t, tb, "bob", kgo.ConsumerGroup("g-alice"), kgo.ConsumeTopics("orders"))
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = "g-alice", "consumer", 10000, 10000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
	// kgo asks FindCoordinator first, which needs DESCRIBE on the group.
	if _, err := join.RequestWith(ctx, bobGroup); !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("bob JoinGroup: %v", err)
	}
	// Straight to the coordinator (this broker), JoinGroup itself refuses.
	if r, err := join.RequestWith(ctx, bobGroup.Broker(int(tb.srv.cfg.NodeID))); err != nil || r.ErrorCode != kerr.GroupAuthorizationFailed.Code {
		t.Fatalf("bob JoinGroup at the coordinator: %v %+v", err, r)
	}
	// carol's ACL names a host she is not connecting from.
	carol := aclClient(t, tb, "carol")
	if err := carol.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.ClusterAuthorizationFailed) && !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("carol produce from 127.0.0.1 with an ACL for 10.9.9.9: %v", err)
	}

	// A MATCH filter finds every ACL that applies to logs-secret: the
	// prefixed ALLOW and the literal DENY.
	match := describeAllACLs()
	match.ResourceType, match.ResourcePatternType, match.ResourceName = kmsg.ACLResourceTypeTopic, kmsg.ACLResourcePatternTypeMatch, kmsg.StringPtr("logs-secret")
	matched, err := match.RequestWith(ctx, adminCl)
	if err != nil || matched.ErrorCode != 0 {
		t.Fatalf("MATCH logs-secret: %v %+v", err, matched)
	}
	n := 0
	for _, r := range matched.Resources {
		n += len(r.ACLs)
	}
	if n != 3 { // prefixed WRITE and READ, literal DENY ALL
		t.Fatalf("MATCH logs-secret described %d ACLs, want 3: %+v", n, matched.Resources)
	}
	// sarama's admin reads the same ACLs with its own decoder.
	scfg := saramaConfig()
	scfg.Net.SASL.Enable, scfg.Net.SASL.Mechanism = true, sarama.SASLTypePlaintext
	scfg.Net.SASL.User, scfg.Net.SASL.Password = "admin", "admin-pw"
	sadm, err := sarama.NewClusterAdmin([]string{tb.srv.ListenerAddr("SASL_PLAINTEXT")}, scfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sadm.Close()
	name := "orders"
	sacls, err := sadm.ListAcls(sarama.AclFilter{ResourceType: sarama.AclResourceTopic, ResourceName: &name,
		ResourcePatternTypeFilter: sarama.AclPatternLiteral, Operation: sarama.AclOperationAny, PermissionType: sarama.AclPermissionAny})
	if err != nil {
		t.Fatal(err)
	}
	if len(sacls) != 1 || len(sacls[0].Acls) != 3 { // alice READ, WRITE; carol ALL
		t.Fatalf("sarama lists for orders %+v", sacls)
	}

	// Deleting alice's READ on orders takes effect on her open connection.
	del, err := admin.DeleteACLs(ctx, kadm.NewACLs().Allow("User:alice").AllowHosts("*").Topics("orders").Operations(kadm.OpRead))
	if err != nil || len(del) != 1 || del[0].Err != nil || len(del[0].Deleted) != 1 {
		t.Fatalf("delete alice READ on orders: %v %+v", err, del)
	}
	lo := kmsg.NewPtrListOffsetsRequest() // DESCRIBE still implied by WRITE
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "orders"
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Timestamp = -1
	lt.Partitions = append(lt.Partitions, lp)
	lo.Topics = append(lo.Topics, lt)
	if r, err := lo.RequestWith(ctx, alice); err != nil || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("alice ListOffsets after the delete: %v %+v", err, r)
	}
	fetch := kmsg.NewPtrFetchRequest()
	fetch.MaxWaitMillis, fetch.MaxBytes = 10, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic, ft.TopicID = "orders", md.Topics["orders"].ID // kgo sends v13+, by topic id
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = 1<<20, -1
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)
	if r, err := fetch.RequestWith(ctx, alice); err != nil || r.Topics[0].Partitions[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("alice Fetch after the delete: %v %+v", err, r)
	}

	// The ACLs are in the quorum: a restart keeps them.
	before := countACLs(t, aclClient(t, tb, "admin"))
	tb.restart()
	if after := countACLs(t, aclClient(t, tb, "admin")); after != before || before != 7 { // eight created, one deleted
		t.Fatalf("ACLs before the restart %d, after %d, want 7", before, after)
	}
}

// describeAllACLs is a DescribeAcls request matching every ACL.
func describeAllACLs() *kmsg.DescribeACLsRequest {
	r := kmsg.NewPtrDescribeACLsRequest()
	r.ResourceType, r.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	r.Operation, r.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	return r
}

func countACLs(t *testing.T, cl *kgo.Client) int {
	t.Helper()
	res, err := describeAllACLs().RequestWith(testContext(t), cl)
	if err != nil || res.ErrorCode != 0 {
		t.Fatalf("describe all ACLs: %v %+v", err, res)
	}
	n := 0
	for _, r := range res.Resources {
		n += len(r.ACLs)
	}
	return n
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// TestACLAPIsWithoutAuthorizer: the ACL APIs answer SECURITY_DISABLED
// when no authorizer is configured, as Kafka does.
func TestACLAPIsWithoutAuthorizer(t *testing.T) {
	tb := startTestBroker(t)
	adm := kadm.NewClient(tb.client())
	dr, err := describeAllACLs().RequestWith(testContext(t), tb.client())
	if err != nil || dr.ErrorCode != kerr.SecurityDisabled.Code {
		t.Fatalf("DescribeAcls without an authorizer: %v %+v, want SECURITY_DISABLED", err, dr)
	}
	res, err := adm.CreateACLs(testContext(t), kadm.NewACLs().Allow("User:a").Topics("t").Operations(kadm.OpRead))
	if err != nil || len(res) != 1 || !errors.Is(res[0].Err, kerr.SecurityDisabled) {
		t.Fatalf("CreateAcls without an authorizer: %v %+v", err, res)
	}
}

// TestEveryAPIAuthorizes: each API the broker serves either checks ACLs
// in its handler or is one of those whose Kafka rule is ALTER on the
// cluster, which the fallback in handleFrame enforces. A new API must
// make that choice.
func TestEveryAPIAuthorizes(t *testing.T) {
	fallback := []int16{kmsg.AlterPartitionAssignments.Int16(), kmsg.UpdateFeatures.Int16()}
	for _, a := range sortedAPIs() {
		if !apiChecksACLs[a.key] && !slices.Contains(fallback, a.key) {
			t.Errorf("%s neither authorizes in its handler nor is an ALTER-on-the-cluster API", a.name)
		}
	}
}

// TestACLsThreeNodesOverMutualTLS: three nodes whose only listener is
// mTLS with an authorizer; the nodes' certificate principal (User:broker)
// is the super user, so followers fetch and coordinators write markers
// with CLUSTER_ACTION. The admin's ACLs, created on one node, govern alice
// on every leader: an acks=all produce with min.insync.replicas=3, a
// transaction, a read_committed consume. A client posing as a follower
// without CLUSTER_ACTION is refused.
func TestACLsThreeNodesOverMutualTLS(t *testing.T) {
	f := newTLSFixture(t)
	adminCert := f.ca.Issue("admin")
	c := startTestCluster(t, 3, func(cfg *Config) {
		mustSet(t, cfg,
			"listeners", "INTERNAL://"+cfg.Listen,
			"listener.security.protocol.map", "INTERNAL:SSL",
			"inter.broker.listener.name", "INTERNAL",
			"ssl.keystore.location", f.server.Keystore,
			"ssl.truststore.location", f.ca.File,
			"ssl.client.auth", "required",
			"ssl.principal.mapping.rules", "RULE:^CN=([^,]*),.*$/$1/,DEFAULT",
			"authorizer.class.name", "strata",
			"super.users", "User:broker;User:admin",
		)
	})
	ctx := testContext(t)
	src, err := tlsconf.New(map[string]string{tlsconf.TruststoreLocation: f.ca.File, tlsconf.KeystoreLocation: adminCert.Keystore})
	if err != nil {
		t.Fatal(err)
	}
	adminTLS := src.ClientConfig()
	adm := kadm.NewClient(c.client(kgo.DialTLSConfig(adminTLS)))
	if res, err := adm.CreateTopic(ctx, 2, 3, map[string]*string{"min.insync.replicas": ptr("3")}, "guarded"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	for _, b := range []*kadm.ACLBuilder{
		kadm.NewACLs().Allow("User:alice").Topics("guarded").Operations(kadm.OpWrite, kadm.OpRead),
		kadm.NewACLs().Allow("User:alice").TransactionalIDs("alice-txn").Operations(kadm.OpWrite),
	} {
		if res, err := adm.CreateACLs(ctx, b); err != nil || res[0].Err != nil {
			t.Fatalf("create ACLs: %v %+v", err, res)
		}
	}
	aliceOpt := kgo.DialTLSConfig(f.clientTLS(t, true)) // the fixture's client certificate is alice
	produceTxnConsume(t, c, aliceOpt, "guarded", "alice-txn", 40)
	cl := c.client(aliceOpt)
	// alice posing as replica 2 on every node.
	md, err := kadm.NewClient(cl).Metadata(ctx, "guarded")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range md.Brokers {
		fetch := kmsg.NewPtrFetchRequest()
		fetch.ReplicaID, fetch.MaxWaitMillis, fetch.MaxBytes = 2, 10, 1<<20
		fetch.ReplicaState.ID = 2
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic, ft.TopicID = "guarded", md.Topics["guarded"].ID
		for p := range int32(2) {
			fp := kmsg.NewFetchRequestTopicPartition()
			fp.Partition, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = p, 1<<20, -1
			ft.Partitions = append(ft.Partitions, fp)
		}
		fetch.Topics = append(fetch.Topics, ft)
		r, err := fetch.RequestWith(ctx, cl.Broker(int(b.NodeID)))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range r.Topics[0].Partitions {
			if p.ErrorCode != kerr.TopicAuthorizationFailed.Code {
				t.Fatalf("node %d: alice's follower fetch of partition %d answered %d, want TOPIC_AUTHORIZATION_FAILED", b.NodeID, p.Partition, p.ErrorCode)
			}
		}
	}
}

// TestConsumerGroupHeartbeatNeedsDescribeOnTopics: KIP-848's heartbeat
// needs READ on the group and DESCRIBE on every subscribed topic.
func TestConsumerGroupHeartbeatNeedsDescribeOnTopics(t *testing.T) {
	tb, _ := startSASLBroker(t, func(c *Config) { mustSet(t, c, "authorizer.class.name", "strata", "super.users", "User:admin") })
	ctx := testContext(t)
	addr := tb.srv.ListenerAddr("SASL_PLAINTEXT")
	admin := kadm.NewClient(saslClient(t, addr, kgo.SASL(plain.Auth{User: "admin", Pass: "admin-secret"}.AsMechanism())))
	if _, err := admin.CreateTopics(ctx, 1, 1, nil, "hb-topic"); err != nil {
		t.Fatal(err)
	}
	if res, err := admin.CreateACLs(ctx, kadm.NewACLs().Allow("User:carol").AllowHosts("*").Groups("hb-group").Operations(kadm.OpRead)); err != nil || res[0].Err != nil {
		t.Fatalf("grant: %v %+v", err, res)
	}
	carol := saslClient(t, addr, kgo.SASL(plain.Auth{User: "carol", Pass: "carol-secret"}.AsMechanism()))
	heartbeat := func() *kmsg.ConsumerGroupHeartbeatResponse {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = "hb-group", "Hm6JPZ0dT0CJ2rZqjZ2qQg", 0, 30000
		req.SubscribedTopicNames = []string{"hb-topic"}
		resp, err := req.RequestWith(ctx, carol)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if r := heartbeat(); r.ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("without DESCRIBE on the topic: code %d", r.ErrorCode)
	}
	if res, err := admin.CreateACLs(ctx, kadm.NewACLs().Allow("User:carol").AllowHosts("*").Topics("hb-topic").Operations(kadm.OpDescribe)); err != nil || res[0].Err != nil {
		t.Fatalf("grant: %v %+v", err, res)
	}
	if r := heartbeat(); r.ErrorCode != 0 {
		t.Fatalf("with DESCRIBE on the topic: code %d", r.ErrorCode)
	}
}
