package console

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// maxFilterLength bounds a filter expression's source.
const maxFilterLength = 4096

// recordEnv is what a browse filter expression sees, named as the stream
// jobs' expressions name it (streams/job Env): value (a JSON value decoded
// to a map, list, string, number, bool or nil; otherwise the text, or the
// bytes when it is not UTF-8), key (its text, or nil without a key),
// headers (name to text), topic, partition, offset and timestamp (a
// time.Time). For example: value.amount > 100 && headers.source == "web".
type recordEnv struct {
	Value     any               `expr:"value"`
	Key       any               `expr:"key"`
	Headers   map[string]string `expr:"headers"`
	Topic     string            `expr:"topic"`
	Partition int               `expr:"partition"`
	Offset    int               `expr:"offset"`
	Timestamp time.Time         `expr:"timestamp"`
}

// recordFilter keeps the records whose key contains a substring and for
// which an expression is true. Not safe for concurrent use (one browse).
type recordFilter struct {
	key     string
	program *vm.Program
	machine vm.VM

	failures     int    // records the expression failed on
	firstFailure string // the first failure's message
}

// newRecordFilter compiles a filter; nil (and no error) when both are
// empty. A compile error says where in the expression it is.
func newRecordFilter(key, expression string) (*recordFilter, error) {
	if key == "" && strings.TrimSpace(expression) == "" {
		return nil, nil
	}
	f := &recordFilter{key: key}
	if strings.TrimSpace(expression) != "" {
		if len(expression) > maxFilterLength {
			return nil, fmt.Errorf("filter is %d bytes long, at most %d are allowed", len(expression), maxFilterLength)
		}
		program, err := expr.Compile(expression, expr.Env(recordEnv{}), expr.AsBool())
		if err != nil {
			return nil, fmt.Errorf("filter: %v", err)
		}
		f.program = program
	}
	return f, nil
}

func (f *recordFilter) matches(rec *kgo.Record) bool {
	if f.key != "" && (rec.Key == nil || !strings.Contains(string(rec.Key), f.key)) {
		return false
	}
	if f.program == nil {
		return true
	}
	env := recordEnv{
		Value:     decodeValue(rec.Value),
		Topic:     rec.Topic,
		Partition: int(rec.Partition),
		Offset:    int(rec.Offset),
		Timestamp: rec.Timestamp,
		Headers:   make(map[string]string, len(rec.Headers)),
	}
	if rec.Key != nil {
		env.Key = string(rec.Key)
	}
	for _, h := range rec.Headers {
		env.Headers[h.Key] = string(h.Value)
	}
	out, err := f.machine.Run(f.program, env)
	if err != nil {
		if f.failures == 0 {
			f.firstFailure = fmt.Sprintf("offset %d: %v", rec.Offset, err)
		}
		f.failures++
		return false
	}
	ok, _ := out.(bool)
	return ok
}

// decodeValue is a record value as the expression sees it.
func decodeValue(b []byte) any {
	if b == nil {
		return nil
	}
	var v any
	if json.Unmarshal(b, &v) == nil {
		return v
	}
	if utf8.Valid(b) {
		return string(b)
	}
	return b
}
