package main

import (
	"strings"
	"testing"
	"time"
)

// TestConfigCommands: strata config set/get for the cluster default, a
// broker, its loggers and a group against a real broker, and the one-line
// errors of bad input.
func TestConfigCommands(t *testing.T) {
	addr := startBroker(t, nil)
	run := func(args ...string) cliResult {
		t.Helper()
		return runCLI(t, 20*time.Second, "", append([]string{"--brokers", addr}, args...)...)
	}
	ok := func(want string, args ...string) string {
		t.Helper()
		r := run(args...)
		if r.err != nil || !strings.Contains(r.stdout, want) {
			t.Fatalf("strata %s: %v\n%s", strings.Join(args, " "), r.err, r.stdout)
		}
		return r.stdout
	}
	ok("Completed updating config for default broker.", "config", "set", "--entity-type", "brokers", "--entity-default", "--add-config", "log.retention.ms=3600000,log.cleanup.policy=[delete,compact]")
	out := ok("Dynamic configs for default broker are:", "config", "get", "--entity-type", "brokers", "--entity-default")
	for _, want := range []string{"log.retention.ms=3600000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=3600000}", "log.cleanup.policy=delete,compact"} {
		if !strings.Contains(out, want) {
			t.Errorf("default broker configs lack %q:\n%s", want, out)
		}
	}
	ok("Completed updating config for broker 1.", "config", "set", "--entity-type", "brokers", "--entity-name", "1", "--add-config", "log.retention.ms=7200000")
	out = ok("Dynamic configs for broker 1 are:", "config", "get", "--entity-type", "brokers", "--entity-name", "1")
	if !strings.Contains(out, "log.retention.ms=7200000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=7200000, DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=3600000") || strings.Contains(out, "log.cleanup.policy") {
		t.Errorf("broker 1's dynamic configs:\n%s", out)
	}
	out = ok("All configs for broker 1 are:", "config", "get", "--entity-type", "brokers", "--entity-name", "1", "--all")
	if !strings.Contains(out, "  num.partitions=1 ") || !strings.Contains(out, "  log.cleanup.policy=delete,compact ") {
		t.Errorf("--all lacks static and inherited configs:\n%s", out)
	}
	ok("Completed updating config for broker-logger 1.", "config", "set", "--entity-type", "broker-loggers", "--entity-name", "1", "--add-config", "strata.metadata=WARN")
	if out = ok("strata.metadata=WARN", "config", "get", "--entity-type", "broker-loggers", "--entity-name", "1"); !strings.Contains(out, "root=") {
		t.Errorf("loggers:\n%s", out)
	}
	ok("Completed updating config for group orders.", "config", "set", "--entity-type", "groups", "--entity-name", "orders", "--add-config", "consumer.session.timeout.ms=50000")
	ok("consumer.session.timeout.ms=50000", "config", "get", "--entity-type", "groups", "--entity-name", "orders")
	ok("Completed updating config for broker 1.", "config", "set", "--entity-type", "brokers", "--entity-name", "1", "--delete-config", "log.retention.ms")
	if out = ok("Dynamic configs for broker 1 are:", "config", "get", "--entity-type", "brokers", "--entity-name", "1"); strings.Contains(out, "log.retention.ms") {
		t.Errorf("log.retention.ms still set on broker 1:\n%s", out)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"config", "set", "--entity-type", "brokers", "--entity-default", "--add-config", "log.dirs=/x"}, "INVALID_CONFIG"},
		{[]string{"config", "set", "--entity-type", "brokers", "--entity-default", "--add-config", "log.retention.ms"}, "expected key=value"},
		{[]string{"config", "set", "--entity-type", "brokers", "--entity-name", "1"}, "nothing to alter"},
		{[]string{"config", "get", "--entity-type", "users", "--entity-name", "x"}, "--entity-type"},
		{[]string{"config", "get", "--entity-type", "groups"}, "needs --entity-name"},
		{[]string{"config", "set", "--entity-type", "groups", "--entity-name", "g", "--add-config", "consumer.session.timeout.ms=1"}, "outside"},
		{[]string{"config", "set", "--entity-type", "broker-loggers", "--entity-name", "1", "--add-config", "root=LOUD"}, "not a level"},
	} {
		r := run(tc.args...)
		if r.err == nil || !strings.Contains(r.err.Error(), tc.want) || strings.Count(r.err.Error(), "\n") > 0 {
			t.Errorf("strata %s: %v, want one line with %q", strings.Join(tc.args, " "), r.err, tc.want)
		}
	}
}
