package broker

import (
	"flag"
	"os"
	"testing"

	"github.com/strata-streaming/strata/tiering/iceberg"
)

// The broker's tests run with the Iceberg writer's freed buffers
// overwritten (iceberg.PoisonFreedBuffers): a commit round that used its
// records after giving their memory back (icebergArena) would write 0xA5
// bytes into the tables the tests read. Benchmarks run without, as the
// broker does.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		iceberg.PoisonFreedBuffers()
	}
	os.Exit(m.Run())
}
