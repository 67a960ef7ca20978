package broker

import (
	"strconv"
	"testing"

	"github.com/IBM/sarama"
)

// TestConfigDocsComplete: every topic config and broker property has a
// documentation sentence, so a new one cannot be added without it.
func TestConfigDocsComplete(t *testing.T) {
	for name := range topicConfigDefs {
		if d := configDoc(name); d == nil || *d == "" {
			t.Errorf("topic config %s has no documentation", name)
		}
	}
	for name := range brokerProperties {
		if d := configDoc(name); d == nil || *d == "" {
			t.Errorf("broker property %s has no documentation", name)
		}
	}
}

// TestDescribeConfigsDocumentation: DescribeConfigs v3+ with
// include_documentation fills in every entry, decoded by sarama (whose
// functional test asserts it); without the flag none is sent.
func TestDescribeConfigsDocumentation(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("documented", 1, nil)
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	b := sarama.NewBroker(tb.addr())
	if err := b.Open(cfg); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, include := range []bool{true, false} {
		resp, err := b.DescribeConfigs(&sarama.DescribeConfigsRequest{Version: 3, IncludeDocumentation: include, Resources: []*sarama.ConfigResource{
			{Type: sarama.TopicResource, Name: "documented"},
			{Type: sarama.BrokerResource, Name: strconv.Itoa(int(tb.srv.cfg.NodeID))},
		}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resp.Resources {
			if r.ErrorCode != 0 || len(r.Configs) == 0 {
				t.Fatalf("resource %s: error %d, %d configs", r.Name, r.ErrorCode, len(r.Configs))
			}
			for _, c := range r.Configs {
				has := c.Documentation != nil && *c.Documentation != ""
				if has != include {
					t.Fatalf("include_documentation=%v: %s of %s has documentation %v", include, c.Name, r.Name, has)
				}
			}
		}
	}
}
