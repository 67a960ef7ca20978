package cluster

import (
	"testing"

	"github.com/strata-streaming/strata/internal/puritytest"
)

// TestPureCore keeps the state machine free of I/O and clock reads: replay
// of the log must give the same state on every node.
func TestPureCore(t *testing.T) {
	puritytest.Check(t, "the metadata state machine",
		"bytes", "encoding/base64", "encoding/json", "errors", "fmt", "maps", "slices", "sort", "strconv", "strings")
}
