package main

// The --format template of `strata consume`. Placeholders follow kcat:
//
//	%t topic      %p partition   %o offset      %T timestamp (ms since epoch)
//	%k key        %v value       %K key length  %S value length
//	%h headers as key=value pairs joined by ','
//	%% a literal '%'
//
// and the escapes \n \r \t \\ stand for newline, carriage return, tab and a
// backslash. Anything else is copied as is. A null key or value prints as
// nothing under %k/%v and as -1 under %K/%S.

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/registry/serde"
)

// defaultRecordFormat prints each value on its own line.
const defaultRecordFormat = `%v\n`

// formatHelp documents the template for the command's help text.
const formatHelp = `output template for each record (default '%v\n'), or avro, protobuf, json_schema or schema
to print each value decoded with the schema registry as one JSON line; kcat placeholders:
  %t topic   %p partition   %o offset   %T timestamp (ms since epoch)
  %k key     %v value       %K key length (-1 if null)   %S value length (-1 if null)
  %h headers as k=v,k=v    %% a literal %
  escapes: \n newline, \t tab, \r carriage return, \\ backslash`

// recordFormat is a parsed --format template: literal runs and fields.
type recordFormat []formatPart

// formatPart is either literal bytes (field == 0) or one placeholder.
type formatPart struct {
	literal []byte
	field   byte
}

// parseRecordFormat parses a --format template; an unknown placeholder or
// escape, or a template ending in a lone '%' or '\', is an error.
func parseRecordFormat(tmpl string) (recordFormat, error) {
	var (
		parts   recordFormat
		literal []byte
	)
	flush := func() {
		if len(literal) > 0 {
			parts = append(parts, formatPart{literal: literal})
			literal = nil
		}
	}
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		if c != '%' && c != '\\' {
			literal = append(literal, c)
			continue
		}
		if i+1 == len(tmpl) {
			return nil, fmt.Errorf("format %q: dangling %q at the end", tmpl, c)
		}
		i++
		next := tmpl[i]
		if c == '\\' {
			switch next {
			case 'n':
				literal = append(literal, '\n')
			case 't':
				literal = append(literal, '\t')
			case 'r':
				literal = append(literal, '\r')
			case '\\':
				literal = append(literal, '\\')
			default:
				return nil, fmt.Errorf("format %q: unknown escape \\%c", tmpl, next)
			}
			continue
		}
		switch next {
		case '%':
			literal = append(literal, '%')
		case 't', 'p', 'o', 'T', 'k', 'v', 'K', 'S', 'h':
			flush()
			parts = append(parts, formatPart{field: next})
		default:
			return nil, fmt.Errorf("format %q: unknown placeholder %%%c", tmpl, next)
		}
	}
	flush()
	return parts, nil
}

// appendRecord renders r through the template, appending to dst.
func (f recordFormat) appendRecord(dst []byte, r *kgo.Record) []byte {
	for _, p := range f {
		switch p.field {
		case 0:
			dst = append(dst, p.literal...)
		case 't':
			dst = append(dst, r.Topic...)
		case 'p':
			dst = strconv.AppendInt(dst, int64(r.Partition), 10)
		case 'o':
			dst = strconv.AppendInt(dst, r.Offset, 10)
		case 'T':
			dst = strconv.AppendInt(dst, r.Timestamp.UnixMilli(), 10)
		case 'k':
			dst = append(dst, r.Key...)
		case 'v':
			dst = append(dst, r.Value...)
		case 'K':
			dst = strconv.AppendInt(dst, nullableLen(r.Key), 10)
		case 'S':
			dst = strconv.AppendInt(dst, nullableLen(r.Value), 10)
		case 'h':
			for i, h := range r.Headers {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, h.Key...)
				dst = append(dst, '=')
				dst = append(dst, h.Value...)
			}
		}
	}
	return dst
}

// nullableLen is len(b), or -1 for a null (nil) field as Kafka encodes it.
func nullableLen(b []byte) int64 {
	if b == nil {
		return -1
	}
	return int64(len(b))
}

// recordPrinter renders one record, appending to dst.
type recordPrinter func(ctx context.Context, dst []byte, r *kgo.Record) ([]byte, error)

// schemaFormats are the --format names that decode values with the
// schema registry.
var schemaFormats = map[string]bool{"avro": true, "protobuf": true, "json_schema": true, "schema": true}

// recordPrinterFor is --format's printer: a template, or one of
// schemaFormats, which prints each value decoded as one JSON line.
func recordPrinterFor(cmd *cobra.Command, opts consumeOptions) (recordPrinter, error) {
	if schemaFormats[strings.ToLower(opts.format)] {
		c, err := registryAccess{url: opts.registryURL}.client(cmd)
		if err != nil {
			return nil, fmt.Errorf("--schema-registry: %w", err)
		}
		return func(ctx context.Context, dst []byte, r *kgo.Record) ([]byte, error) {
			if r.Value == nil {
				return append(dst, "null\n"...), nil
			}
			v, _, err := serde.Decode(ctx, c, r.Value)
			if err != nil {
				return dst, err
			}
			b, err := json.Marshal(v)
			if err != nil {
				return dst, err
			}
			return append(append(dst, b...), '\n'), nil
		}, nil
	}
	tmpl := opts.format
	if tmpl == "" {
		tmpl = defaultRecordFormat
	}
	format, err := parseRecordFormat(tmpl)
	if err != nil {
		return nil, err
	}
	return func(_ context.Context, dst []byte, r *kgo.Record) ([]byte, error) {
		return format.appendRecord(dst, r), nil
	}, nil
}
