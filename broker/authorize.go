package broker

// Authorization by ACLs (authorizer.class.name):
//   - Each handler checks what Kafka's checks for its API, with Kafka's
//     operations and error codes (TOPIC_AUTHORIZATION_FAILED per
//     partition, GROUP_…, TRANSACTIONAL_ID_…, CLUSTER_… per item), and
//     says so in apiChecksACLs. An API missing from that set needs ALTER
//     on the cluster: a new API is closed until its checks are written,
//     never silently open.
//   - The ACLs live in the metadata quorum (cluster.State.ACLs, version
//     ACLVersion). The broker indexes them once per version
//     (acl.Authorizer) and each connection remembers its decisions for
//     that version, so a produce or fetch of a known topic costs a map
//     lookup.

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
)

// authorizerClassNames are the values authorizer.class.name accepts: none,
// or Strata's authorizer under its own name or Kafka's (a properties file
// written for Kafka keeps working).
var authorizerClassNames = []string{"", "strata", "org.apache.kafka.metadata.authorizer.StandardAuthorizer", "kafka.security.authorizer.AclAuthorizer"}

// authorizationEnabled reports whether requests are checked against ACLs.
func (c *Config) authorizationEnabled() bool { return c.AuthorizerClassName != "" }

// superUsers parses super.users: principals separated by ';'.
func (c *Config) superUsers() ([]string, error) {
	var out []string
	for _, p := range strings.Split(c.SuperUsers, ";") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if typ, name, ok := strings.Cut(p, ":"); !ok || typ == "" || name == "" {
			return nil, fmt.Errorf("broker: super.users: %q is not a principal (Type:Name, e.g. User:admin)", p)
		}
		out = append(out, p)
	}
	return out, nil
}

// apiChecksACLs lists the APIs whose handlers authorize their requests;
// nil values mark those that need no authorization at all.
var apiChecksACLs = map[int16]bool{}

// checksACLs registers keys as authorizing in their handlers.
func checksACLs(keys ...kmsg.Key) {
	for _, k := range keys {
		apiChecksACLs[k.Int16()] = true
	}
}

func init() {
	// Needed before authentication, or open to every client as in Kafka.
	checksACLs(kmsg.ApiVersions, kmsg.SASLHandshake, kmsg.SASLAuthenticate, kmsg.DescribeCluster)
}

// authzIndex is the authorizer of one ACL version.
type authzIndex struct {
	version int64
	a       *acl.Authorizer
}

// authzState shares the authorizer of the current ACL version; mu only
// serializes rebuilds.
type authzState struct {
	mu  sync.Mutex
	cur atomic.Pointer[authzIndex]
}

// authorizer returns the authorizer of the ACLs the node holds now.
func (s *Server) authorizer() *authzIndex {
	st := s.clusterState()
	if cur := s.authz.cur.Load(); cur != nil && cur.version == st.ACLVersion {
		return cur
	}
	s.authz.mu.Lock()
	defer s.authz.mu.Unlock()
	if cur := s.authz.cur.Load(); cur != nil && cur.version == st.ACLVersion {
		return cur
	}
	supers, _ := s.cfg.superUsers() // Validate refused a bad list
	idx := &authzIndex{version: st.ACLVersion, a: acl.NewAuthorizer(st.ACLs, supers, s.cfg.AllowEveryoneIfNoACLFound)}
	s.authz.cur.Store(idx)
	return idx
}

// authzKey is one decision a connection remembers.
type authzKey struct {
	op   acl.Operation
	typ  acl.ResourceType
	name string
	any  bool // AuthorizeAny
}

// authzCache is a connection's decisions for one ACL version; it is reset
// when the version or the principal changes.
type authzCache struct {
	version   int64
	principal string
	decisions map[authzKey]bool
}

// maxCachedDecisions bounds a connection's cache (a client asking about
// millions of topics).
const maxCachedDecisions = 4096

// authorize reports whether the connection may perform op on the resource;
// always true without an authorizer and for the broker's own calls.
func (rc *requestContext) authorize(op acl.Operation, t acl.ResourceType, name string) bool {
	return rc.decide(authzKey{op: op, typ: t, name: name})
}

// authorizeCluster is authorize on the cluster resource.
func (rc *requestContext) authorizeCluster(op acl.Operation) bool {
	return rc.authorize(op, acl.ResourceCluster, acl.ClusterName)
}

// authorizeIdempotent reports whether the connection may produce
// idempotently without a transactional id: IDEMPOTENT_WRITE on the
// cluster, or WRITE on any topic (KIP-679).
func (rc *requestContext) authorizeIdempotent() bool {
	return rc.authorizeCluster(acl.OpIdempotentWrite) || rc.decide(authzKey{op: acl.OpWrite, typ: acl.ResourceTopic, any: true})
}

func (rc *requestContext) decide(k authzKey) bool {
	c := rc.conn
	if c == nil || !rc.s.cfg.authorizationEnabled() {
		return true
	}
	idx := rc.s.authorizer()
	cache := &c.authz
	if cache.decisions == nil || cache.version != idx.version || cache.principal != c.principal || len(cache.decisions) >= maxCachedDecisions {
		*cache = authzCache{version: idx.version, principal: c.principal, decisions: map[authzKey]bool{}}
	}
	if ok, hit := cache.decisions[k]; hit {
		return ok
	}
	host := hostOf(c.remote)
	var ok bool
	if k.any {
		ok = idx.a.AuthorizeAny(c.principal, host, k.op, k.typ)
	} else {
		ok = idx.a.Authorize(c.principal, host, k.op, k.typ, k.name)
	}
	cache.decisions[k] = ok
	if !ok {
		rc.s.metrics.authorizationDenied.WithLabelValues(kmsg.NameForKey(rc.header.apiKey)).Inc()
		rc.s.connLog.log(slog.LevelInfo, "authz\x00"+c.principal+"\x00"+host+"\x00"+k.String(), "authorization denied",
			"principal", c.principal, "host", host, "operation", opName(k.op), "resource", k.String(), "api", kmsg.NameForKey(rc.header.apiKey))
	}
	return ok
}

func (k authzKey) String() string {
	if k.any {
		return resourceTypeName(k.typ) + ":*(any)"
	}
	return resourceTypeName(k.typ) + ":" + k.name
}

// resourceTypeName and opName are Kafka's names (TOPIC, READ), as kmsg
// spells them.
func resourceTypeName(t acl.ResourceType) string { return kmsg.ACLResourceType(t).String() }

func opName(op acl.Operation) string { return kmsg.ACLOperation(op).String() }

// topicDenied returns TOPIC_AUTHORIZATION_FAILED, counted, when the
// connection may not perform op on topic; else 0.
func (rc *requestContext) topicDenied(op acl.Operation, topic string) int16 {
	return rc.denied(op, acl.ResourceTopic, topic, kerr.TopicAuthorizationFailed.Code)
}

// groupDenied is topicDenied for a group (GROUP_AUTHORIZATION_FAILED).
func (rc *requestContext) groupDenied(op acl.Operation, group string) int16 {
	return rc.denied(op, acl.ResourceGroup, group, kerr.GroupAuthorizationFailed.Code)
}

// txnDenied is topicDenied for a transactional id
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
func (rc *requestContext) txnDenied(op acl.Operation, id string) int16 {
	return rc.denied(op, acl.ResourceTransactionalID, id, kerr.TransactionalIDAuthorizationFailed.Code)
}

// clusterDenied is topicDenied for the cluster (CLUSTER_AUTHORIZATION_FAILED).
func (rc *requestContext) clusterDenied(op acl.Operation) int16 {
	return rc.denied(op, acl.ResourceCluster, acl.ClusterName, kerr.ClusterAuthorizationFailed.Code)
}

func (rc *requestContext) denied(op acl.Operation, t acl.ResourceType, name string, code int16) int16 {
	if rc.authorize(op, t, name) {
		return 0
	}
	return rc.countError(code)
}

// configDenied checks a config resource: op (DESCRIBE_CONFIGS or
// ALTER_CONFIGS) on the topic, or on the cluster for brokers. It returns
// the Kafka error and message, or 0.
func (rc *requestContext) configDenied(typ kmsg.ConfigResourceType, name string, op acl.Operation) (int16, string) {
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		if !rc.authorize(op, acl.ResourceTopic, name) {
			return kerr.TopicAuthorizationFailed.Code, "needs " + opName(op) + " on topic " + name
		}
	case kmsg.ConfigResourceTypeGroupConfig:
		if !rc.authorize(op, acl.ResourceGroup, name) {
			return kerr.GroupAuthorizationFailed.Code, "needs " + opName(op) + " on group " + name
		}
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger, kmsg.ConfigResourceTypeClientMetrics:
		if !rc.authorizeCluster(op) {
			return kerr.ClusterAuthorizationFailed.Code, "needs " + opName(op) + " on the cluster"
		}
	}
	return 0, ""
}

// KIP-430's authorized operations: the operations of each resource type
// that a describe can report.
var (
	groupOperations   = []acl.Operation{acl.OpRead, acl.OpDelete, acl.OpDescribe, acl.OpDescribeConfigs, acl.OpAlterConfigs}
	topicOperations   = []acl.Operation{acl.OpRead, acl.OpWrite, acl.OpCreate, acl.OpDelete, acl.OpAlter, acl.OpDescribe, acl.OpDescribeConfigs, acl.OpAlterConfigs}
	clusterOperations = []acl.Operation{acl.OpCreate, acl.OpAlter, acl.OpDescribe, acl.OpClusterAction, acl.OpDescribeConfigs, acl.OpAlterConfigs, acl.OpIdempotentWrite}
)

// authorizedOperations is KIP-430's bitfield (bit n for operation n) of
// the ops the connection may perform on the resource; all of them without
// an authorizer.
func (rc *requestContext) authorizedOperations(t acl.ResourceType, name string, ops []acl.Operation) int32 {
	var bits int32
	for _, op := range ops {
		if rc.authorize(op, t, name) {
			bits |= 1 << op
		}
	}
	return bits
}

func (rc *requestContext) groupAuthorizedOperations(group string) int32 {
	return rc.authorizedOperations(acl.ResourceGroup, group, groupOperations)
}
