package broker

import (
	"net"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
)

// Helpers shared by the group API handlers (08–16, 42, 47).

// code is a Kafka error's code, 0 for none.
func code(err *kerr.Error) int16 {
	if err == nil {
		return 0
	}
	return err.Code
}

// clientHost is the client's address as Kafka reports it ("/127.0.0.1").
func (rc *requestContext) clientHost() string {
	host, _, err := net.SplitHostPort(rc.conn.remote)
	if err != nil {
		host = rc.conn.remote
	}
	return "/" + host
}

// subscriptionDenied checks, as Kafka's group heartbeats do, that every
// subscribed topic is describable: TOPIC_AUTHORIZATION_FAILED naming the
// others, 0 if all are.
func (rc *requestContext) subscriptionDenied(topics []string) (int16, *string) {
	var hidden []string
	for _, topic := range topics {
		if !rc.authorize(acl.OpDescribe, acl.ResourceTopic, topic) {
			hidden = append(hidden, topic)
		}
	}
	if len(hidden) == 0 {
		return 0, nil
	}
	return rc.countError(kerr.TopicAuthorizationFailed.Code), kmsg.StringPtr("not authorized to describe the subscribed topics " + strings.Join(hidden, ", "))
}
