package serde

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-streaming/strata/registry/schema"
)

// Confluent's error codes that callers commonly test for (the registry's
// REST API answers them in Error.Code).
const (
	CodeSubjectNotFound = 40401
	CodeVersionNotFound = 40402
	CodeSchemaNotFound  = 40403
	CodeIncompatible    = 409
	CodeInvalidSchema   = 42201
)

// Error is an error answer of the registry: the HTTP status and
// Confluent's body {"error_code":N,"message":"…"}. An answer without
// such a body has Code equal to Status and the start of the body (or the
// status text) as Message. Match it with errors.As.
type Error struct {
	Status  int
	Code    int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s (error_code %d)", e.Message, e.Code) }

// ErrClient marks failures of the client itself (the registry could not be
// reached, or answered something unreadable), as opposed to an *Error the
// registry answered.
var ErrClient = errors.New("serde: schema registry client")

// maxResponseBytes bounds what the client reads of one answer.
const maxResponseBytes = 64 << 20

// Opt configures a Client.
type Opt func(*Client)

// BasicAuth sends user and password with every request.
func BasicAuth(user, password string) Opt {
	return func(c *Client) { c.user, c.password, c.basicAuth = user, password, true }
}

// TLSConfig is the TLS configuration for an https registry URL. It is
// ignored when HTTPClient gives a client of the caller's.
func TLSConfig(cfg *tls.Config) Opt { return func(c *Client) { c.tlsConfig = cfg } }

// HTTPClient makes the Client send its requests with hc.
func HTTPClient(hc *http.Client) Opt { return func(c *Client) { c.http = hc } }

// Timeout bounds each request (default 30s; 0: only the context bounds
// it). It is ignored when HTTPClient gives a client of the caller's.
func Timeout(d time.Duration) Opt { return func(c *Client) { c.timeout = d } }

// LatestTTL makes Version(subject, -1) answer from the cache for d after
// fetching; by default the latest version is fetched every time.
func LatestTTL(d time.Duration) Opt { return func(c *Client) { c.latestTTL = d } }

// Client calls one registry's REST API. It is safe for concurrent use.
//
// Schemas by id and by subject and version number are cached for the
// Client's life, as Confluent's clients cache them: the registry never
// changes what an id or a version names (only a permanent delete followed
// by a new registration could reuse a version number). The latest version
// is cached only for LatestTTL. Registrations and lookups are cached by
// subject and schema, so that a serializer registering the same schema
// for every record asks once.
type Client struct {
	base      string
	user      string
	password  string
	basicAuth bool
	tlsConfig *tls.Config
	timeout   time.Duration
	latestTTL time.Duration
	http      *http.Client
	now       func() time.Time

	mu struct {
		sync.Mutex
		byID      map[int]Schema
		byVersion map[subjectVersion]Schema
		latest    map[string]latestEntry
		// registered and lookedUp map subject and Text (with the
		// normalize flag) to the stored version.
		registered map[textKey]Schema
		lookedUp   map[textKey]Schema
	}
}

type subjectVersion struct {
	subject string
	version int
}

type latestEntry struct {
	schema  Schema
	fetched time.Time
}

type textKey struct {
	subject   string
	text      string // the Text as JSON
	normalize bool
}

// NewClient returns a client of the registry at url (http://host:port or
// https://…, optionally with a path prefix).
func NewClient(rawURL string, opts ...Opt) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(rawURL), "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("serde: registry URL %q: want http://host:port or https://host:port", rawURL)
	}
	c := &Client{base: u.String(), timeout: 30 * time.Second, now: time.Now}
	if u.User != nil {
		password, _ := u.User.Password()
		c.user, c.password, c.basicAuth = u.User.Username(), password, true
		u.User = nil
		c.base = u.String()
	}
	for _, opt := range opts {
		opt(c)
	}
	if c.http == nil {
		transport := http.DefaultTransport.(*http.Transport).Clone()
		transport.TLSClientConfig = c.tlsConfig
		c.http = &http.Client{Transport: transport, Timeout: c.timeout}
	}
	c.mu.byID = map[int]Schema{}
	c.mu.byVersion = map[subjectVersion]Schema{}
	c.mu.latest = map[string]latestEntry{}
	c.mu.registered = map[textKey]Schema{}
	c.mu.lookedUp = map[textKey]Schema{}
	return c, nil
}

// URL is the registry's base URL, without credentials.
func (c *Client) URL() string { return c.base }

// do sends one request; body (when not nil) is sent as JSON, and a
// successful JSON answer is decoded into out (when not nil).
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("serde: encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	target := c.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrClient, err)
	}
	req.Header.Set("Accept", "application/vnd.schemaregistry.v1+json, application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	}
	if c.basicAuth {
		req.SetBasicAuth(c.user, c.password)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w: cannot reach %s: %w", ErrClient, c.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return fmt.Errorf("%w: read answer of %s %s: %w", ErrClient, method, path, err)
	}
	if resp.StatusCode >= 300 {
		return errorOf(resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%w: unreadable answer to %s %s: %w", ErrClient, method, path, err)
	}
	return nil
}

// errorOf is the *Error of an answer with status ≥ 300.
func errorOf(status int, body []byte) *Error {
	var e struct {
		Code    int    `json:"error_code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) == nil && (e.Code != 0 || e.Message != "") {
		if e.Code == 0 {
			e.Code = status
		}
		return &Error{Status: status, Code: e.Code, Message: e.Message}
	}
	msg := http.StatusText(status)
	if text := strings.TrimSpace(string(body)); text != "" {
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text = text[:i]
		}
		if len(text) > 200 {
			text = text[:200] + "…"
		}
		msg += ": " + text
	}
	return &Error{Status: status, Code: status, Message: "HTTP " + strconv.Itoa(status) + " " + msg}
}

func subjectPath(subject string) string { return "/subjects/" + url.PathEscape(subject) }

// versionText is a version as the API names it in a path: a number, or
// latest for -1.
func versionText(version int) string {
	if version == -1 {
		return "latest"
	}
	return strconv.Itoa(version)
}

// apiSchema is a schema as the API shows it.
type apiSchema struct {
	Subject    string             `json:"subject,omitempty"`
	Version    int                `json:"version,omitempty"`
	ID         int                `json:"id,omitempty"`
	SchemaType schema.Type        `json:"schemaType,omitempty"`
	References []schema.Reference `json:"references,omitempty"`
	Schema     string             `json:"schema"`
}

func typeOrAvro(t schema.Type) schema.Type {
	if t == "" {
		return schema.Avro
	}
	return t
}

// withoutParsed is s as it is cached: Parsed is filled by complete.
func (a apiSchema) schema() Schema {
	return Schema{ID: a.ID, Subject: a.Subject, Version: a.Version, Type: typeOrAvro(a.SchemaType),
		Text: a.Schema, References: a.References}
}
