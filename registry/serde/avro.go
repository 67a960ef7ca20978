package serde

// Avro binary encoding of natural Go values, and decoding to them, walking
// the hamba schema with hamba's Reader and Writer. hamba's own generic
// codec decodes a union to the bare value or to {"type": value} depending
// on whether every branch is in its type registry, and encodes numbers
// only of the exact Go type; walking the schema here gives one answer for
// every schema.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hamba/avro/v2"
)

// maxAvroDepth bounds how deep values (and recursive schemas) nest.
const maxAvroDepth = 256

// avroPath names the place in a value an error is about.
type avroPath []string

func (p avroPath) String() string {
	if len(p) == 0 {
		return "value"
	}
	return strings.Join(p, "")
}

func (p avroPath) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s", p, fmt.Sprintf(format, args...))
}

// encodeAvro appends the Avro binary encoding of v.
func encodeAvro(dst []byte, s avro.Schema, v any) ([]byte, error) {
	w := avro.NewWriter(nil, 512)
	if err := writeAvro(w, s, v, nil); err != nil {
		return nil, err
	}
	if w.Error != nil {
		return nil, w.Error
	}
	return append(dst, w.Buffer()...), nil
}

func deref(s avro.Schema) avro.Schema {
	if ref, ok := s.(*avro.RefSchema); ok {
		return ref.Schema()
	}
	return s
}

func logicalOf(s avro.Schema) avro.LogicalSchema {
	if l, ok := s.(avro.LogicalTypeSchema); ok {
		return l.Logical()
	}
	return nil
}

func writeAvro(w *avro.Writer, s avro.Schema, v any, path avroPath) error {
	if len(path) > maxAvroDepth {
		return path.errorf("nested deeper than %d", maxAvroDepth)
	}
	s = deref(s)
	logical := logicalOf(s)
	switch s.Type() {
	case avro.Null:
		if v != nil {
			return path.errorf("want null, got %s", describe(v))
		}
	case avro.Boolean:
		b, ok := v.(bool)
		if !ok {
			return path.errorf("want a boolean, got %s", describe(v))
		}
		w.WriteBool(b)
	case avro.Int, avro.Long:
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if s.Type() == avro.Int {
			lo, hi = math.MinInt32, math.MaxInt32
		}
		n, err := intValue(v, logical, lo, hi, path)
		if err != nil {
			return err
		}
		if s.Type() == avro.Int {
			w.WriteInt(int32(n))
		} else {
			w.WriteLong(n)
		}
	case avro.Float, avro.Double:
		f, err := floatValue(v, path)
		if err != nil {
			return err
		}
		if s.Type() == avro.Float {
			w.WriteFloat(float32(f))
		} else {
			w.WriteDouble(f)
		}
	case avro.String:
		str, ok := v.(string)
		if !ok {
			return path.errorf("want a string, got %s", describe(v))
		}
		w.WriteString(str)
	case avro.Bytes:
		if dec, ok := logical.(*avro.DecimalLogicalSchema); ok {
			b, err := decimalBytes(v, dec, 0, path)
			if err != nil {
				return err
			}
			w.WriteBytes(b)
			return nil
		}
		b, err := bytesValue(v, path)
		if err != nil {
			return err
		}
		w.WriteBytes(b)
	case avro.Fixed:
		fixed := s.(*avro.FixedSchema)
		var b []byte
		var err error
		if dec, ok := logical.(*avro.DecimalLogicalSchema); ok {
			b, err = decimalBytes(v, dec, fixed.Size(), path)
		} else {
			b, err = bytesValue(v, path)
		}
		if err != nil {
			return err
		}
		if len(b) != fixed.Size() {
			return path.errorf("fixed %s takes %d bytes, got %d", fixed.FullName(), fixed.Size(), len(b))
		}
		w.Write(b) //nolint:errcheck // the Writer keeps errors in w.Error
	case avro.Enum:
		enum := s.(*avro.EnumSchema)
		str, ok := v.(string)
		if !ok {
			return path.errorf("want a symbol of enum %s, got %s", enum.FullName(), describe(v))
		}
		i := slices.Index(enum.Symbols(), str)
		if i < 0 {
			return path.errorf("%q is not a symbol of enum %s (%s)", str, enum.FullName(), strings.Join(enum.Symbols(), ", "))
		}
		w.WriteInt(int32(i))
	case avro.Array:
		items, ok := v.([]any)
		if !ok {
			return path.errorf("want an array, got %s", describe(v))
		}
		if len(items) > 0 {
			w.WriteBlockHeader(int64(len(items)), 0)
			for i, item := range items {
				if err := writeAvro(w, s.(*avro.ArraySchema).Items(), item, append(path, "["+strconv.Itoa(i)+"]")); err != nil {
					return err
				}
			}
		}
		w.WriteBlockHeader(0, 0)
	case avro.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return path.errorf("want an object (an Avro map), got %s", describe(v))
		}
		if len(m) > 0 {
			w.WriteBlockHeader(int64(len(m)), 0)
			for _, k := range sortedMapKeys(m) {
				w.WriteString(k)
				if err := writeAvro(w, s.(*avro.MapSchema).Values(), m[k], append(path, "["+strconv.Quote(k)+"]")); err != nil {
					return err
				}
			}
		}
		w.WriteBlockHeader(0, 0)
	case avro.Record:
		return writeRecord(w, s.(*avro.RecordSchema), v, path)
	case avro.Union:
		return writeUnion(w, s.(*avro.UnionSchema), v, path)
	default:
		return path.errorf("unsupported Avro type %s", s.Type())
	}
	return nil
}

func sortedMapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func writeRecord(w *avro.Writer, rec *avro.RecordSchema, v any, path avroPath) error {
	m, ok := v.(map[string]any)
	if !ok {
		return path.errorf("want an object (record %s), got %s", rec.FullName(), describe(v))
	}
	known := make(map[string]bool, len(rec.Fields()))
	for _, f := range rec.Fields() {
		known[f.Name()] = true
		fieldPath := append(path, "."+f.Name())
		fv, present := m[f.Name()]
		if !present {
			if !f.HasDefault() {
				return fieldPath.errorf("missing, and the field has no default")
			}
			if err := writeDefault(w, f.Type(), f.Default(), fieldPath); err != nil {
				return err
			}
			continue
		}
		if err := writeAvro(w, f.Type(), fv, fieldPath); err != nil {
			return err
		}
	}
	for _, k := range sortedMapKeys(m) {
		if !known[k] {
			return path.errorf("record %s has no field %q", rec.FullName(), k)
		}
	}
	return nil
}

// writeDefault writes a field's default: of a union, it is a value of the
// first branch.
func writeDefault(w *avro.Writer, s avro.Schema, def any, path avroPath) error {
	if u, ok := deref(s).(*avro.UnionSchema); ok {
		w.WriteInt(0)
		return writeAvro(w, u.Types()[0], def, path)
	}
	return writeAvro(w, s, def, path)
}

// writeUnion picks the branch: null for nil; the branch a single-key
// object {"name": value} names (Avro's JSON encoding of a union); else the
// first branch that takes the value as it is.
func writeUnion(w *avro.Writer, u *avro.UnionSchema, v any, path avroPath) error {
	types := u.Types()
	if v == nil {
		for i, t := range types {
			if t.Type() == avro.Null {
				w.WriteInt(int32(i))
				return nil
			}
		}
		return path.errorf("null is not a branch of the union %s", u)
	}
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		for name, inner := range m {
			for i, t := range types {
				if branchName(t) == name || shortBranchName(t) == name {
					scratch := avro.NewWriter(nil, 64)
					if err := writeAvro(scratch, t, inner, path); err == nil && scratch.Error == nil {
						w.WriteInt(int32(i))
						w.Write(scratch.Buffer()) //nolint:errcheck // in w.Error
						return nil
					}
				}
			}
		}
	}
	var firstErr error
	for i, t := range types {
		if t.Type() == avro.Null {
			continue
		}
		scratch := avro.NewWriter(nil, 64)
		err := writeAvro(scratch, t, v, path)
		if err == nil {
			err = scratch.Error
		}
		if err == nil {
			w.WriteInt(int32(i))
			w.Write(scratch.Buffer()) //nolint:errcheck // in w.Error
			return nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if nonNull := nonNullBranches(u); nonNull == 1 {
		return firstErr
	}
	return path.errorf("%s fits no branch of the union %s (name one as {\"type\": value})", describe(v), u)
}

func nonNullBranches(u *avro.UnionSchema) int {
	n := 0
	for _, t := range u.Types() {
		if t.Type() != avro.Null {
			n++
		}
	}
	return n
}

// branchName is how Avro's JSON encoding names a union branch: the full
// name of a named type, else the type's name.
func branchName(s avro.Schema) string {
	if named, ok := deref(s).(avro.NamedSchema); ok {
		return named.FullName()
	}
	return string(s.Type())
}

// shortBranchName is a named branch's name without its namespace.
func shortBranchName(s avro.Schema) string {
	if named, ok := deref(s).(avro.NamedSchema); ok {
		return named.Name()
	}
	return string(s.Type())
}

func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		return fmt.Sprintf("the string %q", v)
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case bool:
		return fmt.Sprintf("the boolean %t", v)
	case json.Number:
		return "the number " + v.String()
	case float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprintf("the number %v", v)
	}
	return fmt.Sprintf("a %T", v)
}

// intValue is an integer from a number (which must be whole and in
// [lo, hi]) or, for the date and timestamp logical types, an RFC 3339
// string (a date also "2006-01-02").
func intValue(v any, logical avro.LogicalSchema, lo, hi int64, path avroPath) (int64, error) {
	if str, ok := v.(string); ok && logical != nil {
		return timeValue(str, logical.Type(), path)
	}
	if t, ok := v.(time.Time); ok && logical != nil {
		return timeUnits(t, logical.Type(), path)
	}
	var n int64
	switch v := v.(type) {
	case int:
		n = int64(v)
	case int8:
		n = int64(v)
	case int16:
		n = int64(v)
	case int32:
		n = int64(v)
	case int64:
		n = v
	case uint8:
		n = int64(v)
	case uint16:
		n = int64(v)
	case uint32:
		n = int64(v)
	case uint:
		if uint64(v) > math.MaxInt64 {
			return 0, path.errorf("%d is out of range", v)
		}
		n = int64(v)
	case uint64:
		if v > math.MaxInt64 {
			return 0, path.errorf("%d is out of range", v)
		}
		n = int64(v)
	case float64:
		if v != math.Trunc(v) || v < -(1<<63) || v >= 1<<63 {
			return 0, path.errorf("want a whole number, got %v", v)
		}
		n = int64(v)
	case float32:
		return intValue(float64(v), logical, lo, hi, path)
	case json.Number:
		i, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return 0, path.errorf("want a whole number, got %s", v)
		}
		n = i
	default:
		return 0, path.errorf("want a number, got %s", describe(v))
	}
	if n < lo || n > hi {
		return 0, path.errorf("%d is out of range [%d, %d]", n, lo, hi)
	}
	return n, nil
}

// timeValue is the number a date, timestamp or local-timestamp logical
// type stores for an RFC 3339 string.
func timeValue(s string, logical avro.LogicalType, path avroPath) (int64, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil && logical == avro.Date {
		t, err = time.Parse(time.DateOnly, s)
	}
	if err != nil && (logical == avro.LocalTimestampMillis || logical == avro.LocalTimestampMicros) {
		t, err = time.Parse("2006-01-02T15:04:05.999999999", s)
	}
	if err != nil {
		return 0, path.errorf("want a number or an RFC 3339 time for %s, got %q", logical, s)
	}
	return timeUnits(t, logical, path)
}

func timeUnits(t time.Time, logical avro.LogicalType, path avroPath) (int64, error) {
	switch logical {
	case avro.Date:
		days := t.Unix() / 86400
		if t.Unix() < 0 && t.Unix()%86400 != 0 {
			days--
		}
		return days, nil
	case avro.TimestampMillis:
		return t.UnixMilli(), nil
	case avro.TimestampMicros:
		return t.UnixMicro(), nil
	case avro.LocalTimestampMillis:
		_, offset := t.Zone()
		return t.UnixMilli() + int64(offset)*1000, nil
	case avro.LocalTimestampMicros:
		_, offset := t.Zone()
		return t.UnixMicro() + int64(offset)*1_000_000, nil
	}
	return 0, path.errorf("a time is no value of logical type %s", logical)
}

func floatValue(v any, path avroPath) (float64, error) {
	switch v := v.(type) {
	case float64:
		return v, nil
	case float32:
		return float64(v), nil
	case int:
		return float64(v), nil
	case int32:
		return float64(v), nil
	case int64:
		return float64(v), nil
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return 0, path.errorf("want a number, got %s", v)
		}
		return f, nil
	}
	return 0, path.errorf("want a number, got %s", describe(v))
}

// bytesValue takes []byte, a byte array, or a string: its characters
// must be code points up to U+00FF, each one byte, as Avro's JSON encoding
// writes bytes.
func bytesValue(v any, path avroPath) ([]byte, error) {
	switch v := v.(type) {
	case []byte:
		return v, nil
	case string:
		b := make([]byte, 0, len(v))
		for _, r := range v {
			if r > 0xff {
				return nil, path.errorf("a string for Avro bytes holds code points up to U+00FF, one per byte (Avro's JSON encoding); got %q", r)
			}
			b = append(b, byte(r))
		}
		return b, nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Array && rv.Type().Elem().Kind() == reflect.Uint8 {
		b := make([]byte, rv.Len())
		reflect.Copy(reflect.ValueOf(b), rv)
		return b, nil
	}
	return nil, path.errorf("want bytes, got %s", describe(v))
}

// decimalBytes is the two's-complement big-endian unscaled value of a
// decimal given as a string, json.Number, number or *big.Rat; size > 0
// sign-extends it to a fixed's size. A value with more fractional digits
// than the scale is an error (it would be rounded).
func decimalBytes(v any, dec *avro.DecimalLogicalSchema, size int, path avroPath) ([]byte, error) {
	var r *big.Rat
	switch v := v.(type) {
	case *big.Rat:
		r = v
	case string, json.Number:
		var ok bool
		r, ok = new(big.Rat).SetString(fmt.Sprint(v))
		if !ok {
			return nil, path.errorf("want a decimal number, got %q", v)
		}
	case float64, int, int64:
		var ok bool
		r, ok = new(big.Rat).SetString(fmt.Sprint(v))
		if !ok {
			return nil, path.errorf("want a decimal number, got %v", v)
		}
	default:
		return nil, path.errorf("want a decimal as a string or number, got %s", describe(v))
	}
	scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dec.Scale())), nil)))
	if !scaled.IsInt() {
		return nil, path.errorf("%s has more than %d decimal places", r.FloatString(dec.Scale()+4), dec.Scale())
	}
	unscaled := scaled.Num()
	if p := dec.Precision(); p > 0 && len(new(big.Int).Abs(unscaled).String()) > p && unscaled.Sign() != 0 {
		return nil, path.errorf("%s has more than %d digits (precision)", r.FloatString(dec.Scale()), p)
	}
	b := twosComplement(unscaled)
	if size > 0 {
		if len(b) > size {
			return nil, path.errorf("decimal does not fit fixed of %d bytes", size)
		}
		pad := byte(0)
		if unscaled.Sign() < 0 {
			pad = 0xff
		}
		out := make([]byte, size)
		for i := range size - len(b) {
			out[i] = pad
		}
		copy(out[size-len(b):], b)
		b = out
	}
	return b, nil
}

// twosComplement is n in the fewest big-endian two's-complement bytes.
func twosComplement(n *big.Int) []byte {
	switch n.Sign() {
	case 0:
		return []byte{0}
	case 1:
		b := n.Bytes()
		if b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -n: 2^(8k) - |n| for the smallest k that keeps the sign bit set.
	abs := new(big.Int).Neg(n)
	k := len(abs.Bytes())
	mod := new(big.Int).Lsh(big.NewInt(1), uint(8*k))
	b := new(big.Int).Sub(mod, abs).Bytes()
	for len(b) < k {
		b = append([]byte{0}, b...)
	}
	if b[0]&0x80 == 0 {
		b = append([]byte{0xff}, b...)
	}
	return b
}

// decodeAvro decodes one value of s from all of data.
func decodeAvro(s avro.Schema, data []byte) (any, error) {
	d := &avroDecoder{r: avro.NewReader(nil, 0).Reset(data), size: int64(len(data)), budget: 8*len(data) + 1024}
	v, err := d.read(s, 0)
	if err != nil {
		return nil, err
	}
	if d.r.Error != nil {
		return nil, d.r.Error
	}
	// Reset made the Reader read data in place; nothing may be left.
	var probe [1]byte
	d.r.Read(probe[:])
	if d.r.Error == nil {
		return nil, errors.New("bytes left over after the value")
	}
	return v, nil
}

// avroDecoder reads one value. Lengths are checked against the size of
// the whole payload before anything is allocated, and budget bounds the
// array and map elements decoded, so that a hostile block count of
// zero-byte items (nulls) cannot make it loop for long.
type avroDecoder struct {
	r      *avro.Reader
	size   int64
	budget int
}

var errAvroDepth = fmt.Errorf("value nested deeper than %d", maxAvroDepth)

func (d *avroDecoder) readBytes() ([]byte, error) {
	n := d.r.ReadLong()
	if d.r.Error != nil {
		return nil, d.r.Error
	}
	if n < 0 || n > d.size {
		return nil, fmt.Errorf("length %d does not fit a payload of %d bytes", n, d.size)
	}
	b := make([]byte, n)
	d.r.Read(b)
	return b, d.r.Error
}

// blockCount reads a block header of an array or map: its item count,
// taken from the budget.
func (d *avroDecoder) blockCount() (int64, error) {
	n, _ := d.r.ReadBlockHeader()
	if d.r.Error != nil {
		return 0, d.r.Error
	}
	if n < 0 || n > int64(d.budget) {
		return 0, fmt.Errorf("block of %d items does not fit a payload of %d bytes", n, d.size)
	}
	d.budget -= int(n)
	return n, nil
}

// read reads a value as Decode documents it.
func (d *avroDecoder) read(s avro.Schema, depth int) (any, error) {
	if depth > maxAvroDepth {
		return nil, errAvroDepth
	}
	r := d.r
	s = deref(s)
	logical := logicalOf(s)
	switch s.Type() {
	case avro.Null:
		return nil, nil
	case avro.Boolean:
		return r.ReadBool(), r.Error
	case avro.Int:
		return int64(r.ReadInt()), r.Error
	case avro.Long:
		return r.ReadLong(), r.Error
	case avro.Float:
		return r.ReadFloat(), r.Error
	case avro.Double:
		return r.ReadDouble(), r.Error
	case avro.String:
		b, err := d.readBytes()
		return string(b), err
	case avro.Bytes:
		b, err := d.readBytes()
		if dec, ok := logical.(*avro.DecimalLogicalSchema); ok && err == nil {
			return decimalNumber(b, dec), nil
		}
		return b, err
	case avro.Fixed:
		fixed := s.(*avro.FixedSchema)
		if int64(fixed.Size()) > d.size {
			return nil, fmt.Errorf("fixed %s of %d bytes does not fit a payload of %d bytes", fixed.FullName(), fixed.Size(), d.size)
		}
		b := make([]byte, fixed.Size())
		r.Read(b)
		if dec, ok := logical.(*avro.DecimalLogicalSchema); ok && r.Error == nil {
			return decimalNumber(b, dec), nil
		}
		return b, r.Error
	case avro.Enum:
		enum := s.(*avro.EnumSchema)
		i := r.ReadInt()
		if r.Error != nil {
			return nil, r.Error
		}
		symbol, ok := enum.Symbol(int(i))
		if !ok {
			return nil, fmt.Errorf("enum %s has no symbol %d", enum.FullName(), i)
		}
		return symbol, nil
	case avro.Array:
		items := []any{}
		for {
			n, err := d.blockCount()
			if err != nil || n == 0 {
				return items, err
			}
			for range n {
				item, err := d.read(s.(*avro.ArraySchema).Items(), depth+1)
				if err != nil {
					return nil, err
				}
				items = append(items, item)
			}
		}
	case avro.Map:
		m := map[string]any{}
		for {
			n, err := d.blockCount()
			if err != nil || n == 0 {
				return m, err
			}
			for range n {
				k, err := d.readBytes()
				if err != nil {
					return nil, err
				}
				v, err := d.read(s.(*avro.MapSchema).Values(), depth+1)
				if err != nil {
					return nil, err
				}
				m[string(k)] = v
			}
		}
	case avro.Record:
		rec := s.(*avro.RecordSchema)
		m := make(map[string]any, len(rec.Fields()))
		for _, f := range rec.Fields() {
			v, err := d.read(f.Type(), depth+1)
			if err != nil {
				return nil, err
			}
			m[f.Name()] = v
		}
		return m, nil
	case avro.Union:
		u := s.(*avro.UnionSchema)
		i := r.ReadLong()
		if r.Error != nil {
			return nil, r.Error
		}
		if i < 0 || i >= int64(len(u.Types())) {
			return nil, fmt.Errorf("union branch %d of %d", i, len(u.Types()))
		}
		branch := u.Types()[i]
		v, err := d.read(branch, depth+1)
		if err != nil || branch.Type() == avro.Null || nonNullBranches(u) == 1 {
			return v, err
		}
		return map[string]any{branchName(branch): v}, nil
	}
	return nil, fmt.Errorf("unsupported Avro type %s", s.Type())
}

// decimalNumber is a decimal's value as a json.Number, with exactly scale
// fractional digits.
func decimalNumber(b []byte, dec *avro.DecimalLogicalSchema) json.Number {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	r := new(big.Rat).SetFrac(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dec.Scale())), nil))
	return json.Number(r.FloatString(dec.Scale()))
}
