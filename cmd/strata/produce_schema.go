package main

// The schema flags of `strata produce`: each line's value (and key) is a
// JSON value serialized with a schema of the registry (registry/serde) in
// Confluent's wire format.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/strata-streaming/strata/registry/serde"
)

// produceSchemaOptions are produce's schema flags.
type produceSchemaOptions struct {
	registryURL string
	value, key  schemaChoice
}

// schemaChoice is how the values (or keys) get their schema: a
// registered SUBJECT[:VERSION], or a file to register.
type schemaChoice struct {
	subject  string // SUBJECT[:VERSION]
	file     string
	typeName string
}

func (o *produceSchemaOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.registryURL, "schema-registry", schemaRegistryURLDefault(),
		"schema registry URL for the --*-schema flags ("+schemaRegistryURLEnv+" sets the default; credentials as http://user:password@host:port)")
	for _, side := range []struct {
		name   string
		choice *schemaChoice
	}{{"value", &o.value}, {"key", &o.key}} {
		f.StringVar(&side.choice.subject, side.name+"-schema", "", "serialize each JSON "+side.name+" with this registered schema, SUBJECT[:VERSION] (default version: latest)")
		f.StringVar(&side.choice.file, side.name+"-schema-file", "", "register this schema file first (under --"+side.name+"-schema's subject, else TOPIC-"+side.name+") and serialize each JSON "+side.name+" with it")
		f.StringVar(&side.choice.typeName, side.name+"-schema-type", "", "the type of --"+side.name+"-schema-file: avro, protobuf or json (default: protobuf for .proto, else avro)")
	}
}

// lineEncoder serializes one line's key or value.
type lineEncoder func(line []byte) ([]byte, error)

// encoders resolves the schema flags to an encoder for keys and one for
// values; nil where no schema was asked for.
func (o produceSchemaOptions) encoders(cmd *cobra.Command, topic, keySeparator string) (key, value lineEncoder, err error) {
	if o.key == (schemaChoice{}) && o.value == (schemaChoice{}) {
		return nil, nil, nil
	}
	if o.key != (schemaChoice{}) && keySeparator == "" {
		return nil, nil, errors.New("--key-schema needs --key-separator: without it no line has a key")
	}
	c, err := registryAccess{url: o.registryURL}.client(cmd)
	if err != nil {
		return nil, nil, fmt.Errorf("--schema-registry: %w", err)
	}
	if key, err = o.key.encoder(cmd, c, topic, true); err != nil {
		return nil, nil, err
	}
	if value, err = o.value.encoder(cmd, c, topic, false); err != nil {
		return nil, nil, err
	}
	return key, value, nil
}

func (s schemaChoice) encoder(cmd *cobra.Command, c *serde.Client, topic string, isKey bool) (lineEncoder, error) {
	if s == (schemaChoice{}) {
		return nil, nil
	}
	side := "value"
	if isKey {
		side = "key"
	}
	ctx, cancel := connSettingsOf(cmd).requestContext(cmd)
	defer cancel()
	var (
		chosen serde.Schema
		err    error
	)
	switch {
	case s.file != "":
		subject := serde.TopicNameStrategy(topic, isKey)
		if s.subject != "" {
			if subject, _, _ = cutVersion(s.subject); subject == "" {
				return nil, fmt.Errorf("--%s-schema %q: want SUBJECT[:VERSION]", side, s.subject)
			}
		}
		file := schemaFileFlags{file: s.file, typeName: s.typeName}
		text, terr := file.text()
		if terr != nil {
			return nil, fmt.Errorf("--%s-schema-file: %w", side, terr)
		}
		if chosen, err = c.Register(ctx, subject, text, false); err != nil {
			return nil, fmt.Errorf("register %s schema under %s: %w", side, subject, err)
		}
	case s.typeName != "":
		return nil, fmt.Errorf("--%s-schema-type needs --%s-schema-file", side, side)
	default:
		subject, version, ok := cutVersion(s.subject)
		if !ok {
			subject, version = s.subject, -1
		}
		if subject == "" {
			return nil, fmt.Errorf("--%s-schema %q: want SUBJECT[:VERSION]", side, s.subject)
		}
		if chosen, err = c.Version(ctx, subject, version); err != nil {
			return nil, fmt.Errorf("%s schema %s: %w", side, s.subject, err)
		}
	}
	return func(line []byte) ([]byte, error) {
		v, err := parseJSONLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s is not JSON: %w", side, err)
		}
		b, err := serde.Encode(chosen, v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", side, err)
		}
		return b, nil
	}, nil
}

// parseJSONLine decodes one JSON value, numbers as json.Number (so that
// decimals and longs keep every digit).
func parseJSONLine(line []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty line")
		}
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

// encodeLine serializes a line's key and value with their encoders (a
// null key stays null).
func encodeLine(key, value []byte, encodeKey, encodeValue lineEncoder) ([]byte, []byte, error) {
	var err error
	if encodeKey != nil && key != nil {
		if key, err = encodeKey(key); err != nil {
			return nil, nil, err
		}
	}
	if encodeValue != nil {
		if value, err = encodeValue(value); err != nil {
			return nil, nil, err
		}
	}
	return key, value, nil
}
