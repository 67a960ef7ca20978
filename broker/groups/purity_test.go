package groups

import (
	"testing"

	"github.com/strata-streaming/strata/internal/puritytest"
)

// TestPureCore keeps the state machine free of I/O: it imports only the
// packages below and never reads the clock (time comes in as arguments).
func TestPureCore(t *testing.T) {
	puritytest.Check(t, "the group state machine",
		"bytes", "crypto/rand", "encoding/binary", "errors", "fmt", "maps", "regexp", "slices", "sort", "time",
		"github.com/twmb/franz-go/pkg/kerr", "github.com/twmb/franz-go/pkg/kmsg")
}
