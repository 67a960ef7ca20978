package broker

// DescribeUserScramCredentials (key 50) and AlterUserScramCredentials
// (key 51), v0 (KIP-554).
//
//   - Credentials live in the metadata quorum (cluster.State.Scram), salted:
//     the salt, StoredKey and ServerKey of RFC 5802, never a password.
//     Describe lists each user's mechanisms and iterations only.
//   - Alter takes KIP-554's salted password (the client runs Hi()); a user
//     may appear once per request (DUPLICATE_RESOURCE otherwise), the
//     mechanism must be SCRAM-SHA-256 (1) or SCRAM-SHA-512 (2)
//     (UNSUPPORTED_SASL_MECHANISM), iterations 4096–16384 and a non-empty
//     name, salt and salted password (UNACCEPTABLE_CREDENTIAL); deleting a
//     credential that does not exist is RESOURCE_NOT_FOUND. The valid
//     changes commit as one record.

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/internal/auth"
	"github.com/strata-streaming/strata/metadata/cluster"
)

func init() {
	registerAPI(kmsg.DescribeUserSCRAMCredentials, 0, 0, handleDescribeUserSCRAMCredentials)
	registerAPI(kmsg.AlterUserSCRAMCredentials, 0, 0, handleAlterUserSCRAMCredentials)
	// DESCRIBE and ALTER on the cluster, as in Kafka.
	checksACLs(kmsg.DescribeUserSCRAMCredentials, kmsg.AlterUserSCRAMCredentials)
}

// scramMechanisms maps KIP-554's mechanism numbers to names.
var scramMechanisms = map[int8]string{1: auth.ScramSHA256, 2: auth.ScramSHA512}

func scramMechanismNumber(name string) int8 {
	for n, m := range scramMechanisms {
		if m == name {
			return n
		}
	}
	return 0
}

func handleDescribeUserSCRAMCredentials(rc *requestContext, req *kmsg.DescribeUserSCRAMCredentialsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	if !rc.authorizeCluster(acl.OpDescribe) {
		msg := "describing SCRAM credentials needs DESCRIBE on the cluster"
		resp.ErrorCode, resp.ErrorMessage = rc.countError(kerr.ClusterAuthorizationFailed.Code), &msg
		return resp
	}
	st := rc.s.clusterState()
	var users []string
	requested := req.Users != nil
	if requested {
		for _, u := range req.Users {
			users = append(users, u.Name)
		}
	} else {
		for u := range st.Scram {
			users = append(users, u)
		}
		sort.Strings(users)
	}
	count := map[string]int{}
	for _, u := range users {
		count[u]++
	}
	for _, u := range users {
		r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		r.User = u
		creds, ok := st.Scram[u]
		switch {
		case count[u] > 1:
			r.ErrorCode = rc.countError(kerr.DuplicateResource.Code)
			msg := "user " + u + " appears more than once in the request"
			r.ErrorMessage = &msg
		case !ok:
			r.ErrorCode = rc.countError(kerr.ResourceNotFound.Code)
			msg := "no SCRAM credential for user " + u
			r.ErrorMessage = &msg
		default:
			mechs := make([]string, 0, len(creds))
			for m := range creds {
				mechs = append(mechs, m)
			}
			sort.Strings(mechs)
			for _, m := range mechs {
				ci := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
				ci.Mechanism = scramMechanismNumber(m)
				ci.Iterations = int32(creds[m].Iterations)
				r.CredentialInfos = append(r.CredentialInfos, ci)
			}
		}
		resp.Results = append(resp.Results, r)
	}
	return resp
}

func handleAlterUserSCRAMCredentials(rc *requestContext, req *kmsg.AlterUserSCRAMCredentialsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	results := map[string]*kmsg.AlterUserSCRAMCredentialsResponseResult{}
	var order []string
	fail := func(user string, code int16, msg string) {
		r := results[user]
		if r.ErrorCode == 0 {
			r.ErrorCode = rc.countError(code)
			r.ErrorMessage = &msg
		}
	}
	seen := map[string]int{}
	for _, d := range req.Deletions {
		seen[d.Name]++
	}
	for _, u := range req.Upsertions {
		seen[u.Name]++
	}
	add := func(user string) {
		if _, ok := results[user]; !ok {
			r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
			r.User = user
			results[user] = &r
			order = append(order, user)
		}
	}
	st := rc.s.clusterState()
	var rec cluster.AlterScramCredentials
	alter := rc.authorizeCluster(acl.OpAlter)
	check := func(user string, mech int8) (string, bool) {
		add(user)
		switch {
		case !alter:
			fail(user, kerr.ClusterAuthorizationFailed.Code, "altering SCRAM credentials needs ALTER on the cluster")
		case user == "":
			fail(user, kerr.UnacceptableCredential.Code, "the user name is empty")
		case seen[user] > 1:
			fail(user, kerr.DuplicateResource.Code, "user "+user+" appears more than once in the request")
		case scramMechanisms[mech] == "":
			fail(user, kerr.UnsupportedSaslMechanism.Code, "unknown SCRAM mechanism")
		default:
			return scramMechanisms[mech], true
		}
		return "", false
	}
	for _, d := range req.Deletions {
		mech, ok := check(d.Name, d.Mechanism)
		if !ok {
			continue
		}
		if _, exists := st.Scram[d.Name][mech]; !exists {
			fail(d.Name, kerr.ResourceNotFound.Code, "no "+mech+" credential for user "+d.Name)
			continue
		}
		rec.Deletions = append(rec.Deletions, cluster.ScramDeletion{User: d.Name, Mechanism: mech})
	}
	for _, u := range req.Upsertions {
		mech, ok := check(u.Name, u.Mechanism)
		if !ok {
			continue
		}
		if u.Iterations < auth.MinScramIterations || u.Iterations > auth.MaxScramIterations {
			fail(u.Name, kerr.UnacceptableCredential.Code, "iterations must be between 4096 and 16384")
			continue
		}
		cred, err := auth.ScramCredentialFromSaltedPassword(mech, u.SaltedPassword, u.Salt, int(u.Iterations))
		if err != nil || len(u.Salt) == 0 || len(u.SaltedPassword) == 0 {
			fail(u.Name, kerr.UnacceptableCredential.Code, "the salt and salted password must not be empty")
			continue
		}
		rec.Upserts = append(rec.Upserts, cluster.ScramUpsert{User: u.Name, Mechanism: mech, Credential: scramCredentialOf(cred)})
	}
	if len(rec.Deletions)+len(rec.Upserts) > 0 {
		if code, msg := proposeSecurity(rc, rec); code != 0 {
			for _, d := range rec.Deletions {
				fail(d.User, code, msg)
			}
			for _, u := range rec.Upserts {
				fail(u.User, code, msg)
			}
		}
	}
	for _, u := range order {
		resp.Results = append(resp.Results, *results[u])
	}
	return resp
}
