package streams

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Header is a record header; it is kgo's type, so headers pass between the
// client and operators without copying.
type Header = kgo.RecordHeader

// Record is one typed record flowing through a topology. Headers and
// Timestamp are carried from the input record through every operator to the
// output unless an operator changes them. Topic, Partition and Offset name
// the input record the value came from (for records produced from it too).
type Record[K, V any] struct {
	Key       K
	Value     V
	Headers   []Header
	Timestamp time.Time

	Topic     string
	Partition int32
	Offset    int64
}

// KeyValue is a key and a value, the element type of FlatMap results.
type KeyValue[K, V any] struct {
	Key   K
	Value V
}

// KV returns a KeyValue.
func KV[K, V any](k K, v V) KeyValue[K, V] { return KeyValue[K, V]{Key: k, Value: v} }

// Header returns the value of the last header named key and whether it was
// present.
func (r Record[K, V]) Header(key string) ([]byte, bool) {
	for i := len(r.Headers) - 1; i >= 0; i-- {
		if r.Headers[i].Key == key {
			return r.Headers[i].Value, true
		}
	}
	return nil, false
}

// WithHeader returns a copy of r whose headers have key set to value
// (replacing earlier headers of that name). The input's header slice is not
// modified, so sibling branches never see the change.
func (r Record[K, V]) WithHeader(key string, value []byte) Record[K, V] {
	hs := make([]Header, 0, len(r.Headers)+1)
	for _, h := range r.Headers {
		if h.Key != key {
			hs = append(hs, h)
		}
	}
	r.Headers = append(hs, Header{Key: key, Value: value})
	return r
}
