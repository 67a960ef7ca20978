package connect

// AvroConverter is Confluent's io.confluent.connect.avro.AvroConverter
// (short name "avro"): records are Avro binary in Confluent's wire format,
// their schemas in a schema registry (Strata's, package registry, or
// Confluent's), through registry/serde's client.
//
// FromConnect, for a source's records:
//
//  1. a nil value is a nil record (a tombstone); nothing is registered;
//  2. the Connect schema becomes an Avro schema as Confluent's AvroData
//     makes it (avro_data.go), cached by the *Schema;
//  3. the subject is named by key.subject.name.strategy or
//     value.subject.name.strategy (TopicNameStrategy: <topic>-key or
//     <topic>-value; RecordNameStrategy: the record's full name;
//     TopicRecordNameStrategy: <topic>-<full name>);
//  4. the schema's id: with use.latest.version the subject's latest
//     version is written instead (with latest.compatibility.strict, the
//     default, only if it can read the record's own schema); else with
//     auto.register.schemas (the default) the schema is registered (an id
//     the subject already has is reused), else looked up, and a schema the
//     subject lacks fails the record;
//  5. the value is encoded with hamba/avro and framed: magic byte 0, the
//     id as 4 bytes big-endian, the Avro binary (registry/wire).
//
// ToConnect, for a sink's records: a nil record is a nil value with no
// schema; otherwise the header's id names the writer's schema (fetched
// once per id), the payload is decoded with it (registry/serde's reader,
// which bounds lengths and block counts by the payload), and the Avro schema and
// value are mapped back to Connect (also cached per id). A record without
// the magic byte, an unknown id, a schema of another type or a payload
// that does not decode fails with ErrConversion.
//
// Settings (the converter's own, "key.converter."/"value.converter."
// removed):
//
//	schema.registry.url                      required; of several comma-separated URLs
//	                                         only the first is used (no failover)
//	auto.register.schemas                    true
//	use.latest.version                       false
//	latest.compatibility.strict              true
//	latest.cache.ttl.sec                     -1: the latest version is cached for the
//	                                         converter's life; n: for n seconds
//	key.subject.name.strategy,               TopicNameStrategy; Confluent's class names
//	value.subject.name.strategy              or the short names
//	basic.auth.credentials.source            URL (credentials in the URL) or USER_INFO
//	basic.auth.user.info                     user:password for USER_INFO (never logged)
//	schema.registry.ssl.truststore.location  a PEM file of CA certificates for https
//	                                         (truststore.type PEM; JKS and PKCS12 are refused)
//
// Errors wrap ErrConversion; when the registry cannot be reached the error
// is also a *RetriableError. Registry calls are bounded by a 30 s timeout.

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

	"github.com/hamba/avro/v2"

	avroformat "github.com/strata-streaming/strata/registry/avro"
	"github.com/strata-streaming/strata/registry/schema"
	"github.com/strata-streaming/strata/registry/serde"
	"github.com/strata-streaming/strata/registry/wire"
)

// AvroConverterClass is Confluent's class name of the Avro converter.
const AvroConverterClass = "io.confluent.connect.avro.AvroConverter"

// registryTimeout bounds each call a converter makes to the registry.
const registryTimeout = 30 * time.Second

// AvroConverter is Confluent's AvroConverter; build it with
// NewConverterFor (or NewConverter for a value converter).
type AvroConverter struct {
	isKey        bool
	client       *serde.Client
	autoRegister bool
	useLatest    bool
	strictLatest bool
	strategy     serde.Strategy

	cache struct {
		sync.Mutex
		written map[*Schema]*avroWriteSchema // Connect schema → its Avro form
		ids     map[writeTarget]*avroTarget  // where a schema goes → the id to frame with
		read    map[int]*avroReadSchema      // id → the writer's schema and its Connect form
		compat  map[compatPair]error         // use.latest.version checks
	}
}

// avroWriteSchema is the Avro schema of a Connect schema.
type avroWriteSchema struct {
	text   string
	parsed schema.Parsed
	hamba  avro.Schema
}

type writeTarget struct {
	schema *avroWriteSchema
	topic  string
}

// avroTarget is what FromConnect frames with: the id and the schema the
// value is encoded with (the record's own, or the latest version's).
type avroTarget struct {
	id    int
	hamba avro.Schema
}

type avroReadSchema struct {
	parsed  schema.Parsed
	hamba   avro.Schema
	connect *Schema
}

type compatPair struct {
	latestID int
	schema   *avroWriteSchema
}

// newAvroConverter reads the converter's settings; it makes no request.
func newAvroConverter(props map[string]string, isKey bool) (*AvroConverter, error) {
	c := &AvroConverter{isKey: isKey, autoRegister: true, strictLatest: true}
	rawURL := strings.TrimSpace(props["schema.registry.url"])
	if rawURL == "" {
		return nil, errors.New("connect: AvroConverter needs schema.registry.url")
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

// FromConnect implements Converter.
func (c *AvroConverter) FromConnect(topic string, s *Schema, value any) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	w, err := c.writeSchema(s)
	if err != nil {
		return nil, err
	}
	target, err := c.target(topic, w)
	if err != nil {
		return nil, err
	}
	native, err := avroValue(s, target.hamba, value)
	if err != nil {
		return nil, err
	}
	payload, err := avro.Marshal(target.hamba, native)
	if err != nil {
		return nil, fmt.Errorf("%w: Avro encoding: %v", ErrConversion, err)
	}
	out := make([]byte, 0, wire.HeaderSize+len(payload))
	out = wire.AppendHeader(out, int32(target.id))
	return append(out, payload...), nil
}

// writeSchema is the Avro form of s, cached by pointer.
func (c *AvroConverter) writeSchema(s *Schema) (*avroWriteSchema, error) {
	c.cache.Lock()
	w, ok := c.cache.written[s]
	c.cache.Unlock()
	if ok {
		return w, nil
	}
	text, err := avroSchemaText(s)
	if err != nil {
		return nil, err
	}
	parsed, err := avroformat.New().Parse(text, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: the Avro schema made of the Connect schema does not parse: %v", ErrConversion, err)
	}
	w = &avroWriteSchema{text: text, parsed: parsed, hamba: avroformat.Schema(parsed)}
	c.cache.Lock()
	if c.cache.written == nil || len(c.cache.written) >= schemaCacheSize {
		c.cache.written = map[*Schema]*avroWriteSchema{}
		c.cache.ids = map[writeTarget]*avroTarget{}
		c.cache.compat = map[compatPair]error{}
	}
	c.cache.written[s] = w
	c.cache.Unlock()
	return w, nil
}

// target finds the id (and the schema to encode with) for w on topic.
func (c *AvroConverter) target(topic string, w *avroWriteSchema) (*avroTarget, error) {
	key := writeTarget{w, topic}
	if !c.useLatest {
		c.cache.Lock()
		t, ok := c.cache.ids[key]
		c.cache.Unlock()
		if ok {
			return t, nil
		}
	}
	subject, err := c.strategy(topic, c.isKey, serde.Schema{Type: schema.Avro, Text: w.text, Parsed: w.parsed})
	if err != nil {
		return nil, fmt.Errorf("%w: subject name: %v", ErrConversion, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	text := serde.Text{Type: schema.Avro, Schema: w.text}
	switch {
	case c.useLatest:
		latest, err := c.client.Version(ctx, subject, -1)
		if err != nil {
			return nil, registryError(err, "the latest version of subject "+subject)
		}
		if latest.Type != schema.Avro {
			return nil, fmt.Errorf("%w: the latest version of subject %s is %s, not Avro", ErrConversion, subject, latest.Type)
		}
		if err := c.checkLatest(latest, w, subject); err != nil {
			return nil, err
		}
		return &avroTarget{id: latest.ID, hamba: avroformat.Schema(latest.Parsed)}, nil
	case c.autoRegister:
		registered, err := c.client.Register(ctx, subject, text, false)
		if err != nil {
			return nil, registryError(err, "registering the schema under subject "+subject)
		}
		return c.remember(key, registered.ID, w.hamba), nil
	default:
		found, err := c.client.Lookup(ctx, subject, text)
		var se *serde.Error
		if errors.As(err, &se) && (se.Code == serde.CodeSubjectNotFound || se.Code == serde.CodeSchemaNotFound) {
			return nil, fmt.Errorf("%w: the schema is not registered under subject %s and auto.register.schemas=false (%s): %s",
				ErrConversion, subject, se.Message, w.text)
		}
		if err != nil {
			return nil, registryError(err, "looking the schema up under subject "+subject)
		}
		return c.remember(key, found.ID, w.hamba), nil
	}
}

func (c *AvroConverter) remember(key writeTarget, id int, hamba avro.Schema) *avroTarget {
	t := &avroTarget{id: id, hamba: hamba}
	c.cache.Lock()
	if c.cache.ids == nil {
		c.cache.ids = map[writeTarget]*avroTarget{}
	}
	c.cache.ids[key] = t
	c.cache.Unlock()
	return t
}

// checkLatest: with latest.compatibility.strict the latest version must
// read what the record's own schema describes (Confluent's check).
func (c *AvroConverter) checkLatest(latest serde.Schema, w *avroWriteSchema, subject string) error {
	if !c.strictLatest {
		return nil
	}
	key := compatPair{latest.ID, w}
	c.cache.Lock()
	err, ok := c.cache.compat[key]
	c.cache.Unlock()
	if ok {
		return err
	}
	if reasons := avroformat.New().Compatible(latest.Parsed, w.parsed); len(reasons) > 0 {
		err = fmt.Errorf("%w: use.latest.version: the latest version of subject %s (id %d) cannot read the record's schema: %s",
			ErrConversion, subject, latest.ID, strings.Join(reasons, "; "))
	}
	c.cache.Lock()
	if c.cache.compat == nil {
		c.cache.compat = map[compatPair]error{}
	}
	c.cache.compat[key] = err
	c.cache.Unlock()
	return err
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

// ToConnect implements Converter.
func (c *AvroConverter) ToConnect(_ string, data []byte) (*Schema, any, error) {
	if data == nil {
		return nil, nil, nil
	}
	id, payload, err := wire.ParseHeader(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: not in Confluent's wire format (magic byte 0, schema id): %v", ErrConversion, err)
	}
	r, err := c.readSchema(int(id))
	if err != nil {
		return nil, nil, err
	}
	decoded, err := decodeAvroPayload(r.parsed, payload)
	if err != nil {
		return nil, nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	v, err := connectValueFromAvro(r.connect, r.hamba, decoded)
	if err != nil {
		return nil, nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	return r.connect, v, nil
}

// readSchema is the writer's schema of an id and its Connect form, cached.
func (c *AvroConverter) readSchema(id int) (*avroReadSchema, error) {
	c.cache.Lock()
	r, ok := c.cache.read[id]
	c.cache.Unlock()
	if ok {
		return r, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	s, err := c.client.SchemaByID(ctx, id)
	var se *serde.Error
	if errors.As(err, &se) && se.Code == serde.CodeSchemaNotFound {
		return nil, fmt.Errorf("%w: schema id %d is not in the registry at %s", ErrConversion, id, c.client.URL())
	}
	if err != nil {
		return nil, registryError(err, "fetching schema id "+strconv.Itoa(id))
	}
	if s.Type != schema.Avro {
		return nil, fmt.Errorf("%w: schema id %d is %s, not Avro", ErrConversion, id, s.Type)
	}
	h := avroformat.Schema(s.Parsed)
	cs, err := connectSchemaFromAvro(h)
	if err != nil {
		return nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	r = &avroReadSchema{parsed: s.Parsed, hamba: h, connect: cs}
	c.cache.Lock()
	if c.cache.read == nil || len(c.cache.read) >= schemaCacheSize {
		c.cache.read = map[int]*avroReadSchema{}
	}
	c.cache.read[id] = r
	c.cache.Unlock()
	return r, nil
}
