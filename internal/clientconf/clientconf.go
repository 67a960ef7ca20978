// Package clientconf turns a Kafka client's security settings, as in a
// client.properties file (security.protocol, sasl.mechanism,
// sasl.jaas.config, ssl.*), into franz-go options. The strata CLI
// (--command-config), the Connect worker and stream jobs use it, so one
// file written for Kafka's tools works with all of them.
package clientconf

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/strata-streaming/strata/internal/tlsconf"
)

// Security reports whether key is a setting Options reads.
func Security(key string) bool {
	return key == "security.protocol" || strings.HasPrefix(key, "sasl.") || strings.HasPrefix(key, "ssl.")
}

var jaasOption = regexp.MustCompile(`(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"`)

// jaas reads the username and password options of a JAAS line and checks
// its login module fits the mechanism.
func jaas(line, mechanism string) (user, pass string, err error) {
	if line == "" {
		return "", "", fmt.Errorf("sasl.mechanism=%s needs sasl.jaas.config with username and password", mechanism)
	}
	module := strings.Fields(line)[0]
	want := "org.apache.kafka.common.security.plain.PlainLoginModule"
	if strings.HasPrefix(mechanism, "SCRAM-") {
		want = "org.apache.kafka.common.security.scram.ScramLoginModule"
	}
	if module != want {
		return "", "", fmt.Errorf("sasl.jaas.config: %s does not log in with %s (use %s)", module, mechanism, want)
	}
	for _, m := range jaasOption.FindAllStringSubmatch(line, -1) {
		v := strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(m[2])
		switch m[1] {
		case "username":
			user = v
		case "password":
			pass = v
		}
	}
	if user == "" || pass == "" {
		return "", "", fmt.Errorf("sasl.jaas.config needs username=\"…\" and password=\"…\"")
	}
	return user, pass, nil
}

// Options returns the franz-go options for props' security settings;
// other keys are ignored. A security setting this package does not
// support is an error, never ignored.
func Options(props map[string]string) ([]kgo.Opt, error) {
	protocol := strings.ToUpper(strings.TrimSpace(props["security.protocol"]))
	if protocol == "" {
		protocol = "PLAINTEXT"
	}
	useTLS, useSASL := false, false
	switch protocol {
	case "PLAINTEXT":
	case "SSL":
		useTLS = true
	case "SASL_PLAINTEXT":
		useSASL = true
	case "SASL_SSL":
		useTLS, useSASL = true, true
	default:
		return nil, fmt.Errorf("security.protocol=%s: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", protocol)
	}
	ssl := map[string]string{}
	for k, v := range props {
		switch {
		case strings.HasPrefix(k, "ssl."):
			if !tlsconf.Known(k) {
				return nil, fmt.Errorf("%s is not supported", k)
			}
			ssl[k] = v
		case strings.HasPrefix(k, "sasl.") && k != "sasl.mechanism" && k != "sasl.jaas.config":
			return nil, fmt.Errorf("%s is not supported (sasl.mechanism and sasl.jaas.config are)", k)
		}
	}
	var opts []kgo.Opt
	if useTLS {
		src, err := tlsconf.New(ssl)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(src.ClientConfig()))
	} else if len(ssl) > 0 {
		return nil, fmt.Errorf("ssl.* settings with security.protocol=%s would not be used (SSL or SASL_SSL)", protocol)
	}
	if !useSASL {
		if props["sasl.mechanism"] != "" || props["sasl.jaas.config"] != "" {
			return nil, fmt.Errorf("sasl.* settings with security.protocol=%s would not be used (SASL_PLAINTEXT or SASL_SSL)", protocol)
		}
		return opts, nil
	}
	mech := strings.ToUpper(strings.TrimSpace(props["sasl.mechanism"]))
	switch mech {
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
	case "":
		return nil, fmt.Errorf("security.protocol=%s needs sasl.mechanism (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)", protocol)
	default:
		return nil, fmt.Errorf("sasl.mechanism=%s is not supported by Strata's clients (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)", mech)
	}
	user, pass, err := jaas(strings.TrimSpace(props["sasl.jaas.config"]), mech)
	if err != nil {
		return nil, err
	}
	switch mech {
	case "PLAIN":
		opts = append(opts, kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism()))
	case "SCRAM-SHA-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()))
	default:
		opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()))
	}
	return opts, nil
}
