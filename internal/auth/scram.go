package auth

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strings"
	"time"

	"github.com/xdg-go/scram"
)

// The SCRAM mechanisms Kafka offers (RFC 7677 and its SHA-512 sibling).
const (
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
)

// Kafka's bounds on a new credential's iteration count (ScramMechanism's
// minIterations; AlterUserScramCredentials rejects more than 16384).
const (
	MinScramIterations = 4096
	MaxScramIterations = 16384
)

// ErrInvalidScramCredential is wrapped by the errors of the credential
// constructors and NewScram.
var ErrInvalidScramCredential = errors.New("auth: invalid SCRAM credential")

// ScramCredential is what the server stores for one user and mechanism
// (RFC 5802 section 3): never the password, only
//
//	SaltedPassword = Hi(password, Salt, Iterations)   (PBKDF2 with HMAC-H)
//	StoredKey      = H(HMAC(SaltedPassword, "Client Key"))
//	ServerKey      = HMAC(SaltedPassword, "Server Key")
//
// It marshals to JSON (the byte slices as base64) for the metadata quorum.
type ScramCredential struct {
	Salt       []byte `json:"salt"`
	StoredKey  []byte `json:"storedKey"`
	ServerKey  []byte `json:"serverKey"`
	Iterations int    `json:"iterations"`
}

// scramHash returns mechanism's hash and its output size.
func scramHash(mechanism string) (func() hash.Hash, int, error) {
	switch mechanism {
	case ScramSHA256:
		return sha256.New, sha256.Size, nil
	case ScramSHA512:
		return sha512.New, sha512.Size, nil
	}
	return nil, 0, fmt.Errorf("%w: unknown SCRAM mechanism %q (want %s or %s)", ErrInvalidScramCredential, mechanism, ScramSHA256, ScramSHA512)
}

func checkScramFactors(salt []byte, iterations int) error {
	if len(salt) == 0 {
		return fmt.Errorf("%w: empty salt", ErrInvalidScramCredential)
	}
	if iterations < MinScramIterations || iterations > MaxScramIterations {
		return fmt.Errorf("%w: %d iterations, want %d..%d", ErrInvalidScramCredential, iterations, MinScramIterations, MaxScramIterations)
	}
	return nil
}

// NewScramCredential derives the stored credential of password for
// mechanism. The password is used as its UTF-8 bytes, as Kafka's
// ScramFormatter does (no SASLprep); iterations must be within
// MinScramIterations..MaxScramIterations.
func NewScramCredential(mechanism, password string, salt []byte, iterations int) (ScramCredential, error) {
	newHash, size, err := scramHash(mechanism)
	if err != nil {
		return ScramCredential{}, err
	}
	if err := checkScramFactors(salt, iterations); err != nil {
		return ScramCredential{}, err
	}
	salted, err := pbkdf2.Key(newHash, password, salt, iterations, size)
	if err != nil {
		return ScramCredential{}, fmt.Errorf("%w: %w", ErrInvalidScramCredential, err)
	}
	return scramCredentialFrom(newHash, salted, salt, iterations), nil
}

// ScramCredentialFromSaltedPassword derives the stored credential from
// SaltedPassword = Hi(password, salt, iterations), which is what KIP-554's
// AlterUserScramCredentials upsert carries. saltedPassword must be one
// digest of mechanism's hash long.
func ScramCredentialFromSaltedPassword(mechanism string, saltedPassword, salt []byte, iterations int) (ScramCredential, error) {
	newHash, size, err := scramHash(mechanism)
	if err != nil {
		return ScramCredential{}, err
	}
	if err := checkScramFactors(salt, iterations); err != nil {
		return ScramCredential{}, err
	}
	if len(saltedPassword) != size {
		return ScramCredential{}, fmt.Errorf("%w: salted password is %d bytes, %s needs %d", ErrInvalidScramCredential, len(saltedPassword), mechanism, size)
	}
	return scramCredentialFrom(newHash, saltedPassword, salt, iterations), nil
}

func scramCredentialFrom(newHash func() hash.Hash, salted, salt []byte, iterations int) ScramCredential {
	clientKey := hmacSum(newHash, salted, []byte("Client Key"))
	storedKey := newHash()
	storedKey.Write(clientKey)
	return ScramCredential{
		Salt:       append([]byte(nil), salt...),
		StoredKey:  storedKey.Sum(nil),
		ServerKey:  hmacSum(newHash, salted, []byte("Server Key")),
		Iterations: iterations,
	}
}

func hmacSum(newHash func() hash.Hash, key []byte, parts ...[]byte) []byte {
	mac := hmac.New(newHash, key)
	for _, p := range parts {
		mac.Write(p)
	}
	return mac.Sum(nil)
}

// NewScram returns the SCRAM mechanism named mechanism (ScramSHA256 or
// ScramSHA512). lookup returns the user's credential for that mechanism;
// it is called from many connections at once, with the username decoded
// (=2C and =3D replaced by ',' and '=').
//
// The exchange is RFC 5802's four messages:
//
//	client-first  n,[a=authzid],n=user,r=cnonce[,ext...]
//	server-first  r=cnonce+snonce,s=salt,i=iterations
//	client-final  c=biws,r=cnonce+snonce,p=proof
//	server-final  v=verifier                          (done)
//
// Channel binding ("p=" gs2 flag) and Kafka's delegation-token extension
// (tokenauth=true) are refused. An unknown user gets a server-first message
// made from a fake credential, deterministic per user name within the
// process, and fails only at the client-final message, so the first reply
// does not tell whether the user exists.
func NewScram(mechanism string, lookup func(user string) (ScramCredential, bool)) (Mechanism, error) {
	newHash, size, err := scramHash(mechanism)
	if err != nil {
		return nil, err
	}
	if lookup == nil {
		return nil, fmt.Errorf("%w: nil credential lookup", ErrInvalidScramCredential)
	}
	fakeKey := make([]byte, 32)
	rand.Read(fakeKey)
	return &scramMechanism{name: mechanism, newHash: newHash, hashSize: size, lookup: lookup, fakeKey: fakeKey}, nil
}

type scramMechanism struct {
	name     string
	newHash  func() hash.Hash
	hashSize int
	lookup   func(user string) (ScramCredential, bool)
	// fakeKey keys the fake credentials of unknown users (per process).
	fakeKey []byte
}

func (m *scramMechanism) Name() string { return m.name }

func (m *scramMechanism) Start() Exchange {
	e := &scramExchange{mechanism: m}
	var gen scram.HashGeneratorFcn = m.newHash
	// NewServer never fails; the lookup below never returns an error, so
	// the first reply looks the same for known and unknown users.
	server, _ := gen.NewServer(e.credentialFor)
	e.conversation = server.NewConversation()
	return e
}

// fakeCredential is an unknown user's credential: salt and keys are HMACs
// of the name under the process's key, so repeated attempts see the same
// salt (a changing salt would reveal a fake), and no password matches it.
func (m *scramMechanism) fakeCredential(user string) scram.StoredCredentials {
	salt := hmacSum(sha256.New, m.fakeKey, []byte("salt\x00"), []byte(user))
	return scram.StoredCredentials{
		KeyFactors: scram.KeyFactors{Salt: string(salt), Iters: MinScramIterations},
		StoredKey:  hmacSum(m.newHash, m.fakeKey, []byte("stored key\x00"), []byte(user))[:m.hashSize],
		ServerKey:  hmacSum(m.newHash, m.fakeKey, []byte("server key\x00"), []byte(user))[:m.hashSize],
	}
}

type scramState int

const (
	scramAwaitClientFirst scramState = iota
	scramAwaitClientFinal
	scramFinished
)

type scramExchange struct {
	mechanism    *scramMechanism
	conversation *scram.ServerConversation
	state        scramState
	// known is false when the user was unknown (or its stored credential
	// unusable) and a fake credential stands in; the exchange then fails
	// at the client-final message whatever the proof.
	known     bool
	principal Principal
	// What the client-final check needs from the first round: the
	// credential in use, the gs2 header, client-first-message-bare and
	// the server-first message with its nonce.
	stored          scram.StoredCredentials
	gs2Header       string
	clientFirstBare string
	serverFirst     string
	serverNonce     string
	valid           bool
}

// credentialFor is the xdg-go/scram lookup; it runs during the first Step.
func (e *scramExchange) credentialFor(user string) (scram.StoredCredentials, error) {
	m := e.mechanism
	cred, ok := m.lookup(user)
	if ok && checkScramFactors(cred.Salt, cred.Iterations) == nil &&
		len(cred.StoredKey) == m.hashSize && len(cred.ServerKey) == m.hashSize {
		e.known = true
		e.stored = scram.StoredCredentials{
			KeyFactors: scram.KeyFactors{Salt: string(cred.Salt), Iters: cred.Iterations},
			StoredKey:  cred.StoredKey,
			ServerKey:  cred.ServerKey,
		}
		return e.stored, nil
	}
	e.stored = m.fakeCredential(user)
	return e.stored, nil
}

func (e *scramExchange) Step(msg []byte) ([]byte, bool, error) {
	switch e.state {
	case scramAwaitClientFirst:
		e.state = scramAwaitClientFinal
		reply, err := e.clientFirst(string(msg))
		if err != nil {
			e.state = scramFinished
			return nil, false, err
		}
		return []byte(reply), false, nil
	case scramAwaitClientFinal:
		e.state = scramFinished
		reply, err := e.clientFinal(string(msg))
		if err != nil {
			return nil, false, err
		}
		if !e.known {
			return nil, false, failf("invalid credentials")
		}
		e.valid = true
		return []byte(reply), true, nil
	default:
		return nil, false, ErrExchangeFinished
	}
}

// clientFirst checks what xdg-go/scram accepts but Kafka must refuse, then
// hands the message on.
func (e *scramExchange) clientFirst(msg string) (string, error) {
	fields := strings.Split(msg, ",")
	if len(fields) < 4 {
		return "", malformedf("invalid SCRAM client-first message")
	}
	switch {
	case fields[0] == "n" || fields[0] == "y":
	case strings.HasPrefix(fields[0], "p="):
		return "", failf("SCRAM channel binding is not supported")
	default:
		return "", malformedf("invalid SCRAM client-first message: bad gs2 header")
	}
	for _, ext := range fields[4:] {
		key, value, _ := strings.Cut(ext, "=")
		if key == "tokenauth" && strings.EqualFold(value, "true") {
			return "", failf("delegation token authentication is not supported")
		}
	}
	reply, err := e.conversation.Step(msg)
	if err != nil {
		return "", malformedf("invalid SCRAM client-first message")
	}
	user, authzID := e.conversation.Username(), e.conversation.AuthzID()
	if authzID != "" && authzID != user {
		return "", failf("client requested an authorization id that is different from the username")
	}
	if user == "" {
		return "", malformedf("invalid SCRAM client-first message: empty username")
	}
	e.principal = User(user)
	e.gs2Header = fields[0] + "," + fields[1] + ","
	e.clientFirstBare = msg[len(e.gs2Header):]
	e.serverFirst = reply
	nonce, _, _ := strings.Cut(reply, ",")
	e.serverNonce = strings.TrimPrefix(nonce, "r=")
	return reply, nil
}

// clientFinal verifies the client-final message and returns the
// server-final one. It is written here rather than left to xdg-go/scram
// for one rule of Kafka's: the nonce the client echoes must end with the
// server's, not equal it, because librdkafka sends the client nonce in
// front of the whole server nonce (and Kafka's ScramSaslServer accepts
// that); the proof is checked over the message exactly as sent.
func (e *scramExchange) clientFinal(msg string) (string, error) {
	i := strings.LastIndex(msg, ",p=")
	if i < 0 {
		return "", malformedf("invalid SCRAM client-final message")
	}
	withoutProof := msg[:i]
	proof, err := base64.StdEncoding.DecodeString(msg[i+len(",p="):])
	if err != nil {
		return "", malformedf("invalid SCRAM client-final message: proof is not base64")
	}
	fields := strings.Split(withoutProof, ",")
	if len(fields) < 2 || !strings.HasPrefix(fields[0], "c=") || !strings.HasPrefix(fields[1], "r=") {
		return "", malformedf("invalid SCRAM client-final message")
	}
	if fields[0] != "c="+base64.StdEncoding.EncodeToString([]byte(e.gs2Header)) {
		return "", failf("SCRAM channel binding data does not match the gs2 header")
	}
	if nonce := fields[1][len("r="):]; e.serverNonce == "" || !strings.HasSuffix(nonce, e.serverNonce) {
		return "", failf("invalid SCRAM nonce in the client-final message")
	}
	newHash := e.mechanism.newHash
	authMessage := []byte(e.clientFirstBare + "," + e.serverFirst + "," + withoutProof)
	signature := hmacSum(newHash, e.stored.StoredKey, authMessage)
	if len(proof) != len(signature) {
		return "", failf("invalid credentials")
	}
	clientKey := make([]byte, len(proof))
	for k := range proof {
		clientKey[k] = proof[k] ^ signature[k]
	}
	h := newHash()
	h.Write(clientKey)
	if !hmac.Equal(h.Sum(nil), e.stored.StoredKey) {
		return "", failf("invalid credentials")
	}
	return "v=" + base64.StdEncoding.EncodeToString(hmacSum(newHash, e.stored.ServerKey, authMessage)), nil
}

func (e *scramExchange) Principal() Principal {
	if e.state != scramFinished || !e.valid || !e.known {
		return Principal{}
	}
	return e.principal
}

func (e *scramExchange) Expiry() time.Time { return time.Time{} }
