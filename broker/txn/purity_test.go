package txn

import (
	"testing"

	"github.com/strata-streaming/strata/internal/puritytest"
)

// TestPureCore keeps the coordinator free of I/O: it imports only the
// packages below and never reads the clock (time comes in as arguments).
func TestPureCore(t *testing.T) {
	puritytest.Check(t, "the transaction coordinator",
		"errors", "fmt", "math", "slices", "sort", "time",
		"github.com/twmb/franz-go/pkg/kerr", "github.com/twmb/franz-go/pkg/kmsg")
}
