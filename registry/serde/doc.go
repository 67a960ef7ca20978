// Package serde is a client of a Confluent-compatible schema registry's
// REST API (Strata's own, package registry, or Confluent's) and the
// serializer and deserializer of Confluent's wire format, for the CLI,
// connect's converters and stream jobs. It imports the registry's format
// packages (registry/avro, registry/protobuf, registry/jsonschema) to
// parse schemas, and nothing of the broker.
//
//	c, err := serde.NewClient("http://127.0.0.1:8081", serde.BasicAuth(u, p))
//	s, err := c.Register(ctx, serde.TopicNameStrategy("orders", false), serde.Text{Schema: avsc}, false)
//	b, err := serde.Encode(s, map[string]any{"id": 7.0, "note": nil})
//	v, s, err := serde.Decode(ctx, c, b)   // v: map[string]any{"id": int64(7), "note": nil}
//
// # Wire format
//
//	+-------+-------------------+-------------------------------+----------------------+
//	| 0x00  | schema id         | Protobuf only: message        | payload: Avro binary,|
//	| magic | int32, big endian | indexes (zigzag varints; 0x00 | Protobuf binary or   |
//	|       |                   | is the first message)         | JSON text            |
//	+-------+-------------------+-------------------------------+----------------------+
//
// (registry/wire and registry/protobuf's doc have the details.)
//
// # Client
//
// NewClient takes options for basic auth, TLS, an http.Client of the
// caller's, a request timeout and how long the latest version may be
// cached (LatestTTL; by default it is not). Schemas by id and by subject
// and version, registrations and lookups are cached for the Client's
// life. Every Schema a Client returns is parsed by the registry's own
// format package, its references fetched (by subject and version) and
// resolved recursively. The registry's error answers are *Error (HTTP
// status, Confluent's error_code and message); failures to reach it or to
// read its answer wrap ErrClient.
//
// # Values
//
// Encode takes natural Go values, the shapes encoding/json produces
// (map[string]any, []any, string, float64 or json.Number, bool, nil),
// and also int, int64 and the other integer types, and []byte.
//
// Avro (the binary encoding, walked along the schema with hamba/avro's
// Reader and Writer):
//
//	Avro type                  Encode takes                                   Decode gives
//	-------------------------  ---------------------------------------------  -----------------------------
//	null, boolean, string      nil, bool, string                              the same
//	int, long                  a whole number (float64, json.Number, ints)    int64
//	float, double              a number                                       float32, float64
//	bytes, fixed               []byte, or a string of code points ≤ U+00FF    []byte
//	                           (Avro's JSON encoding, one byte each)
//	enum                       the symbol                                     string
//	array, map                 []any, map[string]any                          []any, map[string]any
//	record                     map[string]any: a missing field takes its      map[string]any, every field
//	                           default; an unknown field is an error
//	union                      nil for null; {"branch": v} names a branch     nil; the bare value when the
//	                           (Avro's JSON encoding: full name of a named    union has one non-null
//	                           type, else the type); else the first branch    branch; else {"branch": v}
//	                           that takes the value as it is
//	decimal (bytes or fixed)   a string or json.Number (or a number, or       json.Number with scale
//	                           *big.Rat); more decimals than the scale or     fractional digits
//	                           digits than the precision is an error
//	date, timestamp-*,         the number, or an RFC 3339 string (a date      int64: the number stored
//	local-timestamp-*          also 2006-01-02), or a time.Time               (days, ms or µs)
//	time-millis, time-micros   the number                                     int64
//
// Decoding reads the whole payload: bytes left over are an error.
//
// JSON Schema: Encode marshals the value with encoding/json, validates the
// result with jsonschema.Validate and writes that JSON; Decode parses the
// payload (numbers as json.Number) without validating it.
//
// Protobuf: Encode writes the value as JSON and reads it with protojson
// into a dynamicpb message of the message's descriptor (field names as in
// the .proto or lowerCamelCase; 64-bit integers as numbers or strings;
// bytes base64), then proto.Marshal; EncodeMessage picks another message
// than the first by its full name. Decode reads the message indexes,
// unmarshals the message they name and gives protojson's rendering of it
// decoded as JSON: field names in lowerCamelCase, fields with default
// values left out, 64-bit integers as strings, enums by name, bytes as
// base64 strings, numbers as json.Number.
//
// # Subject names
//
// TopicNameStrategy, RecordNameStrategy and TopicRecordNameStrategy are
// Confluent's; StrategyByName takes their Java class names or short ones.
package serde
