package connect

// What the converters of Confluent's schema registry formats (Avro, JSON
// Schema, Protobuf) share: their settings, the registry client, the
// choice of the id a record is framed with, and the writer's schema of
// an id a record names. Each format converter keeps its own mapping and
// its own caches of parsed forms; this part caches ids and schemas by id.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/serde"
	"github.com/strata-streaming/strata/registry/wire"
)

// registryTimeout bounds each call a converter makes to the registry.
const registryTimeout = 30 * time.Second

// registryConverter is the registry half of a format converter.
type registryConverter struct {
	name         string        // the converter's name in messages: AvroConverter, …
	format       schema.Format // the format it registers and accepts
	typ          schema.Type   // format.Type()
	isKey        bool
	client       *serde.Client
	autoRegister bool
	useLatest    bool
	strictLatest bool
	strategy     serde.Strategy

	cache struct {
		sync.Mutex
		ids    map[registryTarget]serde.Schema // where a schema goes → what frames it
		read   map[int]serde.Schema            // id → the writer's schema
		compat map[compatPair]error            // use.latest.version checks
	}
}

// registryTarget is a write schema (a format converter's cached value,
// compared by pointer) on a topic.
type registryTarget struct {
	schema any
	topic  string
}

type compatPair struct {
	latestID int
	schema   any
}

// newRegistryConverter reads the settings every registry converter
// takes; it makes no request. name is the converter's name in errors.
func newRegistryConverter(name string, format schema.Format, props map[string]string, isKey bool) (*registryConverter, error) {
	c := &registryConverter{name: name, format: format, typ: format.Type(), isKey: isKey, autoRegister: true, strictLatest: true}
	rawURL := strings.TrimSpace(props["schema.registry.url"])
	if rawURL == "" {
		return nil, fmt.Errorf("connect: %s needs schema.registry.url", name)
	}
	if i := strings.IndexByte(rawURL, ','); i >= 0 {
		rawURL = strings.TrimSpace(rawURL[:i]) // only the first URL is used
	}
	for key, dst := range map[string]*bool{
		"auto.register.schemas":       &c.autoRegister,
		"use.latest.version":          &c.useLatest,
		"latest.compatibility.strict": &c.strictLatest,
	} {
		if v, ok := props[key]; ok {
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return nil, fmt.Errorf("connect: %s %q: want true or false", key, v)
			}
			*dst = b
		}
	}
	strategyKey := "value.subject.name.strategy"
	if isKey {
		strategyKey = "key.subject.name.strategy"
	}
	c.strategy = func(topic string, isKey bool, _ serde.Schema) (string, error) {
		return serde.TopicNameStrategy(topic, isKey), nil
	}
	if name := strings.TrimSpace(props[strategyKey]); name != "" {
		s, err := serde.StrategyByName(name)
		if err != nil {
			return nil, fmt.Errorf("connect: %s: %w", strategyKey, err)
		}
		c.strategy = s
	}
	opts := []serde.Opt{serde.Timeout(registryTimeout)}
	switch src := strings.ToUpper(strings.TrimSpace(props["basic.auth.credentials.source"])); src {
	case "", "URL":
	case "USER_INFO":
		user, password, ok := strings.Cut(props["basic.auth.user.info"], ":")
		if !ok {
			return nil, errors.New("connect: basic.auth.credentials.source=USER_INFO needs basic.auth.user.info as user:password")
		}
		opts = append(opts, serde.BasicAuth(user, password))
	default:
		return nil, fmt.Errorf("connect: basic.auth.credentials.source %q: want URL or USER_INFO", src)
	}
	if path := strings.TrimSpace(props["schema.registry.ssl.truststore.location"]); path != "" {
		if t := strings.ToUpper(strings.TrimSpace(props["schema.registry.ssl.truststore.type"])); t != "" && t != "PEM" {
			return nil, fmt.Errorf("connect: schema.registry.ssl.truststore.type %q: only PEM is supported", t)
		}
		pem, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("connect: schema.registry.ssl.truststore.location: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("connect: schema.registry.ssl.truststore.location %s: no PEM certificate in it", path)
		}
		opts = append(opts, serde.TLSConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}))
	}
	if v := strings.TrimSpace(props["latest.cache.ttl.sec"]); v != "" && c.useLatest {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("connect: latest.cache.ttl.sec %q: want a number of seconds", v)
		}
		if n >= 0 {
			opts = append(opts, serde.LatestTTL(time.Duration(n)*time.Second))
		} else {
			opts = append(opts, serde.LatestTTL(100*365*24*time.Hour))
		}
	} else if c.useLatest {
		opts = append(opts, serde.LatestTTL(100*365*24*time.Hour))
	}
	client, err := serde.NewClient(rawURL, opts...)
	if err != nil {
		// serde's message would repeat the URL, credentials included.
		return nil, errors.New("connect: schema.registry.url: want http://host:port or https://host:port")
	}
	c.client = client
	return c, nil
}

// forgetWritten drops the ids and compatibility verdicts of write
// schemas, when a format converter starts its cache of them over.
func (c *registryConverter) forgetWritten() {
	c.cache.Lock()
	c.cache.ids = map[registryTarget]serde.Schema{}
	c.cache.compat = map[compatPair]error{}
	c.cache.Unlock()
}

// target is the registered schema a record of key (the format
// converter's write schema, by pointer) on topic is framed with: its
// own (registered, or looked up with auto.register.schemas=false) or,
// with use.latest.version, the subject's latest version. text and parsed
// are key's schema.
func (c *registryConverter) target(topic string, key any, text string, parsed schema.Parsed) (serde.Schema, error) {
	cacheKey := registryTarget{key, topic}
	if !c.useLatest {
		c.cache.Lock()
		t, ok := c.cache.ids[cacheKey]
		c.cache.Unlock()
		if ok {
			return t, nil
		}
	}
	subject, err := c.strategy(topic, c.isKey, serde.Schema{Type: c.typ, Text: text, Parsed: parsed})
	if err != nil {
		return serde.Schema{}, fmt.Errorf("%w: subject name: %v", ErrConversion, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	req := serde.Text{Type: c.typ, Schema: text}
	switch {
	case c.useLatest:
		latest, err := c.client.Version(ctx, subject, -1)
		if err != nil {
			return serde.Schema{}, registryError(err, "the latest version of subject "+subject)
		}
		if latest.Type != c.typ {
			return serde.Schema{}, fmt.Errorf("%w: the latest version of subject %s is %s, not %s", ErrConversion, subject, latest.Type, c.typ)
		}
		if err := c.checkLatest(latest, key, parsed, subject); err != nil {
			return serde.Schema{}, err
		}
		return latest, nil
	case c.autoRegister:
		registered, err := c.client.Register(ctx, subject, req, false)
		if err != nil {
			return serde.Schema{}, registryError(err, "registering the schema under subject "+subject)
		}
		return c.remember(cacheKey, registered), nil
	default:
		found, err := c.client.Lookup(ctx, subject, req)
		var se *serde.Error
		if errors.As(err, &se) && (se.Code == serde.CodeSubjectNotFound || se.Code == serde.CodeSchemaNotFound) {
			return serde.Schema{}, fmt.Errorf("%w: the schema is not registered under subject %s and auto.register.schemas=false (%s): %s",
				ErrConversion, subject, se.Message, text)
		}
		if err != nil {
			return serde.Schema{}, registryError(err, "looking the schema up under subject "+subject)
		}
		return c.remember(cacheKey, found), nil
	}
}

func (c *registryConverter) remember(key registryTarget, s serde.Schema) serde.Schema {
	c.cache.Lock()
	if c.cache.ids == nil || len(c.cache.ids) >= schemaCacheSize {
		c.cache.ids = map[registryTarget]serde.Schema{}
	}
	c.cache.ids[key] = s
	c.cache.Unlock()
	return s
}

// checkLatest: with latest.compatibility.strict the latest version must
// read what the record's own schema describes (Confluent's check).
func (c *registryConverter) checkLatest(latest serde.Schema, key any, parsed schema.Parsed, subject string) error {
	if !c.strictLatest {
		return nil
	}
	cacheKey := compatPair{latest.ID, key}
	c.cache.Lock()
	err, ok := c.cache.compat[cacheKey]
	c.cache.Unlock()
	if ok {
		return err
	}
	if reasons := c.format.Compatible(latest.Parsed, parsed); len(reasons) > 0 {
		err = fmt.Errorf("%w: use.latest.version: the latest version of subject %s (id %d) cannot read the record's schema: %s",
			ErrConversion, subject, latest.ID, strings.Join(reasons, "; "))
	}
	c.cache.Lock()
	if c.cache.compat == nil || len(c.cache.compat) >= schemaCacheSize {
		c.cache.compat = map[compatPair]error{}
	}
	c.cache.compat[cacheKey] = err
	c.cache.Unlock()
	return err
}

// schemaByID is the writer's schema of an id, which must be of the
// converter's format.
func (c *registryConverter) schemaByID(id int) (serde.Schema, error) {
	c.cache.Lock()
	s, ok := c.cache.read[id]
	c.cache.Unlock()
	if ok {
		return s, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	s, err := c.client.SchemaByID(ctx, id)
	var se *serde.Error
	if errors.As(err, &se) && se.Code == serde.CodeSchemaNotFound {
		return serde.Schema{}, fmt.Errorf("%w: schema id %d is not in the registry at %s", ErrConversion, id, c.client.URL())
	}
	if err != nil {
		return serde.Schema{}, registryError(err, "fetching schema id "+strconv.Itoa(id))
	}
	if s.Type != c.typ {
		return serde.Schema{}, fmt.Errorf("%w: schema id %d is %s, not %s", ErrConversion, id, s.Type, c.typ)
	}
	c.cache.Lock()
	if c.cache.read == nil || len(c.cache.read) >= schemaCacheSize {
		c.cache.read = map[int]serde.Schema{}
	}
	c.cache.read[id] = s
	c.cache.Unlock()
	return s, nil
}

// registryError wraps an error of the registry client: the registry's own
// answer is a conversion error; not reaching it is retriable too.
func registryError(err error, what string) error {
	var se *serde.Error
	if errors.As(err, &se) {
		return fmt.Errorf("%w: schema registry, %s: %s (error code %d)", ErrConversion, what, se.Message, se.Code)
	}
	if errors.Is(err, serde.ErrClient) || errors.Is(err, context.DeadlineExceeded) {
		return &RetriableError{Err: fmt.Errorf("%w: schema registry, %s: %v", ErrConversion, what, err)}
	}
	return fmt.Errorf("%w: schema registry, %s: %v", ErrConversion, what, err)
}

// formCache is a bounded cache of what a format converter derives from a
// schema: its form of a Connect schema (by *Schema) or the Connect form
// of a registered one (by id). It starts over when full, calling
// onReset.
type formCache[K comparable, V any] struct {
	mu      sync.Mutex
	entries map[K]V
	onReset func()
}

// get is the cached value of key, or what derive makes of it (not cached
// when it fails).
func (c *formCache[K, V]) get(key K, derive func() (V, error)) (V, error) {
	c.mu.Lock()
	v, ok := c.entries[key]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := derive()
	if err != nil {
		var zero V
		return zero, err
	}
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= schemaCacheSize {
		c.entries = map[K]V{}
		if c.onReset != nil {
			c.onReset()
		}
	}
	c.entries[key] = v
	c.mu.Unlock()
	return v, nil
}

// parseFramed splits a record in Confluent's wire format into the
// schema id and what follows.
func parseFramed(data []byte) (int, []byte, error) {
	id, payload, err := wire.ParseHeader(data)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: not in Confluent's wire format (magic byte 0, schema id): %v", ErrConversion, err)
	}
	return int(id), payload, nil
}
