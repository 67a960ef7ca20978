package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestClusterBalanceCommands: balance status of a balanced node;
// decommission writes the cluster-default config the balancer reads (the
// status then shows the node draining and plans nothing, as there is no
// other node to move to), --cancel removes it; bad node ids are refused.
func TestClusterBalanceCommands(t *testing.T) {
	addr := startBroker(t, nil)
	cli(t, addr, "", "topic", "create", "bal", "--partitions", "3")
	out := cli(t, addr, "", "cluster", "balance", "status")
	if !strings.Contains(out, "Balancer: enabled\n") || !strings.Contains(out, "Imbalance score: 0\n") || !strings.Contains(out, "Next moves: 0 ") ||
		!regexp.MustCompile(`(?m)^1\s+-\s+3\s+3\s+\d+\s*$`).MatchString(out) {
		t.Fatalf("status: %q", out)
	}
	if out := cli(t, addr, "", "cluster", "decommission", "1"); !strings.Contains(out, "node 1: decommissioning") {
		t.Fatalf("decommission: %q", out)
	}
	if out := cli(t, addr, "", "config", "get", "--entity-type", "brokers", "--entity-default"); !strings.Contains(out, "strata.balancer.decommission.nodes=1") {
		t.Fatalf("config after decommission: %q", out)
	}
	out = cli(t, addr, "", "cluster", "balance", "status")
	if !strings.Contains(out, "decommissioning (3 replicas left)") || !strings.Contains(out, "Imbalance score: 3\n") {
		t.Fatalf("status while decommissioning: %q", out)
	}
	cli(t, addr, "", "cluster", "decommission", "1", "--cancel")
	if out := cli(t, addr, "", "cluster", "balance", "status"); strings.Contains(out, "decommissioning") {
		t.Fatalf("status after --cancel: %q", out)
	}
	for _, args := range [][]string{
		{"cluster", "decommission", "x"},
		{"cluster", "decommission"},
		{"cluster", "decommission", "-1"},
	} {
		cliErr(t, addr, "", args...)
	}
}
