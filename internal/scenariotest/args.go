// Package scenariotest holds what the datadriven scenario drivers of the
// pure state machines (broker/groups, broker/txn, metadata/cluster) share:
// reading a command's arguments. Test support only.
package scenariotest

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// String is the command's key=value argument, def when absent.
func String(t testing.TB, td *datadriven.TestData, key, def string) string {
	if !td.HasArg(key) {
		return def
	}
	var s string
	td.ScanArgs(t, key, &s)
	return s
}

// Int is the command's key=N argument, def when absent.
func Int(t testing.TB, td *datadriven.TestData, key string, def int) int {
	if !td.HasArg(key) {
		return def
	}
	var v int
	td.ScanArgs(t, key, &v)
	return v
}

// List reads key=(a,b,…): nil when the key is absent, an empty list for
// key=().
func List(td *datadriven.TestData, key string) []string {
	arg, ok := td.Arg(key)
	if !ok {
		return nil
	}
	out := []string{}
	for _, v := range arg.Vals {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
