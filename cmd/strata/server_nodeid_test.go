package main

import "testing"

// TestNodeIDFromHostname: a StatefulSet pod's ordinal plus one; anything
// else is an error rather than a guessed id.
func TestNodeIDFromHostname(t *testing.T) {
	for host, want := range map[string]int32{
		"strata-0":                        1,
		"strata-2":                        3,
		"my-release-strata-11":            12,
		"strata-4.strata-headless.ns.svc": 5,
		"strata-0.strata-headless.default.svc.cluster.local": 1,
	} {
		got, err := nodeIDFromHostname(host)
		if err != nil || got != want {
			t.Errorf("nodeIDFromHostname(%q) = %d, %v; want %d", host, got, err, want)
		}
	}
	for _, host := range []string{"strata", "strata-", "strata-x", "strata-+1", "strata-2147483647", "localhost", ""} {
		if got, err := nodeIDFromHostname(host); err == nil {
			t.Errorf("nodeIDFromHostname(%q) = %d, want an error", host, got)
		}
	}
}
