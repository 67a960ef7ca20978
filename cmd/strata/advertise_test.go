package main

import (
	"errors"
	"testing"
)

func TestWildcardAdvertise(t *testing.T) {
	named := func() (string, error) { return "strata-0", nil }
	unnamed := func() (string, error) { return "", errors.New("no name") }
	for _, tc := range []struct {
		listen   string
		hostname func() (string, error)
		want     string
		ok       bool
	}{
		{"0.0.0.0:9092", named, "strata-0:9092", true},
		{"[::]:9092", named, "strata-0:9092", true},
		{":9092", named, "strata-0:9092", true},
		{"127.0.0.1:9092", named, "", false},
		{"broker.example:9092", named, "", false},
		{"0.0.0.0:9092", unnamed, "", false},
		{"no-port", named, "", false},
	} {
		got, ok := wildcardAdvertise(tc.listen, tc.hostname)
		if got != tc.want || ok != tc.ok {
			t.Errorf("wildcardAdvertise(%q) = %q, %v; want %q, %v", tc.listen, got, ok, tc.want, tc.ok)
		}
	}
}
