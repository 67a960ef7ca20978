package protobuf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/strata-streaming/strata/registry/schema"
)

// MaxMessageIndexes bounds the length of a message-index path that
// ReadMessageIndexes accepts: messages are not nested that deep, and a
// corrupt count must not make the reader allocate.
const MaxMessageIndexes = 100

// ErrMessageIndexes marks a malformed message-index prefix.
var ErrMessageIndexes = errors.New("protobuf: malformed message indexes")

// ErrNoSuchMessage: a message name or index path that the schema does not
// declare.
var ErrNoSuchMessage = errors.New("protobuf: no such message in the schema")

// MessageIndexes is the index path of the message fullName (e.g.
// "pkg.Outer.Inner") in the schema's own file: the message's position
// among the top-level messages, then among the nested messages of each
// enclosing one. Only messages count, not enums; map entries and group
// bodies do not count either (they are not messages a producer writes,
// and Confluent's model has no such nested messages).
func MessageIndexes(p schema.Parsed, fullName string) ([]int, error) {
	f, err := file(p)
	if err != nil {
		return nil, err
	}
	name := strings.TrimPrefix(fullName, ".")
	d := f.FindDescriptorByName(protoreflect.FullName(name))
	md, ok := d.(protoreflect.MessageDescriptor)
	if !ok || !addressable(md) {
		return nil, fmt.Errorf("%w: message %q", ErrNoSuchMessage, fullName)
	}
	var indexes []int
	for md != nil {
		parent := md.Parent()
		var siblings protoreflect.MessageDescriptors
		switch parent := parent.(type) {
		case protoreflect.FileDescriptor:
			siblings = parent.Messages()
		case protoreflect.MessageDescriptor:
			siblings = parent.Messages()
		}
		index := 0
		for i := range siblings.Len() {
			sibling := siblings.Get(i)
			if sibling.FullName() == md.FullName() {
				break
			}
			if addressable(sibling) {
				index++
			}
		}
		indexes = append(indexes, index)
		md, _ = parent.(protoreflect.MessageDescriptor)
	}
	slices.Reverse(indexes)
	return indexes, nil
}

// addressable tells whether a message counts in index paths.
func addressable(md protoreflect.MessageDescriptor) bool {
	return !md.IsMapEntry() && !isGroupBody(md)
}

// MessageByIndexes is the message an index path names in the schema's
// own file. An empty path names the first message, as Confluent reads it.
func MessageByIndexes(p schema.Parsed, indexes []int) (protoreflect.MessageDescriptor, error) {
	f, err := file(p)
	if err != nil {
		return nil, err
	}
	if len(indexes) == 0 {
		indexes = []int{0}
	}
	messages := f.Messages()
	var md protoreflect.MessageDescriptor
	for depth, index := range indexes {
		md = nthAddressable(messages, index)
		if md == nil {
			return nil, fmt.Errorf("%w: indexes %v (no message %d at depth %d)", ErrNoSuchMessage, indexes, index, depth)
		}
		messages = md.Messages()
	}
	return md, nil
}

func nthAddressable(messages protoreflect.MessageDescriptors, n int) protoreflect.MessageDescriptor {
	if n < 0 {
		return nil
	}
	for i := range messages.Len() {
		md := messages.Get(i)
		if !addressable(md) {
			continue
		}
		if n == 0 {
			return md
		}
		n--
	}
	return nil
}

// AppendMessageIndexes appends the message-index prefix Confluent's
// serializers write after the schema ID: the count, then each index, each
// a zigzag varint; the path [0] (the first message, the common case) is
// the single byte 0, as is an empty path.
func AppendMessageIndexes(dst []byte, indexes []int) []byte {
	if len(indexes) == 0 || len(indexes) == 1 && indexes[0] == 0 {
		return append(dst, 0)
	}
	dst = binary.AppendVarint(dst, int64(len(indexes)))
	for _, index := range indexes {
		dst = binary.AppendVarint(dst, int64(index))
	}
	return dst
}

// ReadMessageIndexes reads a message-index prefix from the start of b and
// returns the path and the bytes it took. A count of 0 is the path [0].
// A truncated prefix, a varint longer than 32 bits, a negative count or
// index, or a count above MaxMessageIndexes is an error wrapping
// ErrMessageIndexes.
func ReadMessageIndexes(b []byte) (indexes []int, n int, err error) {
	count, n, err := readZigzag32(b)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: count: %w", ErrMessageIndexes, err)
	}
	switch {
	case count == 0:
		return []int{0}, n, nil
	case count < 0:
		return nil, 0, fmt.Errorf("%w: negative count %d", ErrMessageIndexes, count)
	case count > MaxMessageIndexes:
		return nil, 0, fmt.Errorf("%w: count %d is more than %d", ErrMessageIndexes, count, MaxMessageIndexes)
	}
	indexes = make([]int, 0, count)
	for i := range int(count) {
		index, size, err := readZigzag32(b[n:])
		if err != nil {
			return nil, 0, fmt.Errorf("%w: index %d of %d: %w", ErrMessageIndexes, i, count, err)
		}
		if index < 0 {
			return nil, 0, fmt.Errorf("%w: index %d of %d is negative (%d)", ErrMessageIndexes, i, count, index)
		}
		indexes = append(indexes, int(index))
		n += size
	}
	return indexes, n, nil
}

// readZigzag32 reads one zigzag varint that must fit 32 bits, as Java's
// ByteUtils.readVarint writes them.
func readZigzag32(b []byte) (int32, int, error) {
	u, n := binary.Uvarint(b)
	switch {
	case n == 0:
		return 0, 0, errors.New("truncated varint")
	case n < 0 || n > binary.MaxVarintLen32 || u > math.MaxUint32:
		return 0, 0, errors.New("varint longer than 32 bits")
	}
	v := int32(uint32(u)>>1) ^ -int32(uint32(u)&1)
	return v, n, nil
}
