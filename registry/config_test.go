package registry

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRegistryNewConfig(t *testing.T) {
	c, err := NewConfig(map[string]string{
		"listeners":                           "http://0.0.0.0:18081",
		"kafkastore.bootstrap.servers":        "PLAINTEXT://a:9092, b:9092",
		"kafkastore.topic":                    "_s",
		"kafkastore.topic.replication.factor": "1",
		"kafkastore.timeout.ms":               "2500",
		"kafkastore.security.protocol":        "SASL_PLAINTEXT",
		"kafkastore.sasl.mechanism":           "PLAIN",
		"kafkastore.sasl.jaas.config":         `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`,
		"schema.compatibility.level":          "full",
		"auth.basic.users.file":               "/etc/users",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "0.0.0.0:18081" || strings.Join(c.Brokers, ",") != "a:9092,b:9092" || c.Topic != "_s" || c.ReplicationFactor != 1 ||
		c.WriteTimeout != 2500*time.Millisecond || c.DefaultCompatibility != LevelFull || len(c.ClientOptions) != 1 ||
		c.HTTPSecurity["auth.basic.users.file"] != "/etc/users" || len(c.Formats) != 3 {
		t.Fatalf("%+v", c)
	}
	d, err := NewConfig(map[string]string{"bootstrap.servers": "x:1", "listen": "127.0.0.1:0"})
	if err != nil || d.Topic != DefaultTopic || d.DefaultCompatibility != LevelBackward || d.Listen != "127.0.0.1:0" {
		t.Fatalf("%+v %v", d, err)
	}
	for _, tc := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{}, "no brokers"},
		{map[string]string{"bootstrap.servers": "x:1", "listeners": "https://h:1"}, "ssl.keystore.location"},
		{map[string]string{"bootstrap.servers": "x:1", "ssl.keystore.location": "/k"}, "listeners is not https"},
		{map[string]string{"bootstrap.servers": "x:1", "listeners": "ftp://h:1"}, "want http://"},
		{map[string]string{"bootstrap.servers": "x:1", "kafkastore.security.protocol": "KERBEROS"}, "security.protocol"},
		{map[string]string{"bootstrap.servers": "x:1", "schema.compatibility.level": "sideways"}, "schema.compatibility.level"},
		{map[string]string{"bootstrap.servers": "x:1", "kafkastore.topic.replication.factor": "x"}, "want a number of replicas"},
		{map[string]string{"bootstrap.servers": "x:1", "kafkastore.topic.replication.factor": "0"}, "want a number of replicas"},
		{map[string]string{"bootstrap.servers": "x:1", "kafkastore.timeout.ms": "0"}, "must be positive"},
		{map[string]string{"bootstrap.servers": "x:1", "listen": "nohost"}, "listener"},
		{map[string]string{"bootstrap.servers": "x:1", "host.name": "h"}, "host.name is not a setting of the registry"},
		{map[string]string{"bootstrap.servers": "x:1", "kafkastore.topic": ""}, "topic"},
	} {
		_, err := NewConfig(tc.props)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewConfig(%v) = %v, want ErrInvalidConfig mentioning %q", tc.props, err, tc.want)
		}
	}
}
