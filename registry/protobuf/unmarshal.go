package protobuf

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// UnmarshalDynamic decodes payload as a message of md. The protobuf
// runtime panics on some malformed map entries of dynamic messages
// ("cannot convert nil to map key", found by connect's
// FuzzProtobufToConnect); here that panic is an error, so that a hostile
// record cannot take down what decodes it (a broker validating records, a
// connector, a stream job).
func UnmarshalDynamic(md protoreflect.MessageDescriptor, payload []byte) (msg *dynamicpb.Message, err error) {
	defer func() {
		if r := recover(); r != nil {
			msg, err = nil, fmt.Errorf("malformed payload: %v", r)
		}
	}()
	msg = dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(payload, msg); err != nil {
		return nil, err
	}
	return msg, nil
}
