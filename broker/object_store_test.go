package broker

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-streaming/strata/tiering"
)

// TestObjectStoreURLCheckedAtStart: a bad --object-store fails NewServer
// with a clear error; the default is a directory under the data dir.
func TestObjectStoreURLCheckedAtStart(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.Listen, cfg.HTTPListen = "127.0.0.1:0", ""
	for _, bad := range []string{"ftp://x/y", "no-scheme", "s3://"} {
		cfg.ObjectStore = bad
		_, err := NewServer(cfg, nil)
		if err == nil || !errors.Is(err, tiering.ErrInvalidURL) || !strings.Contains(err.Error(), "--object-store") {
			t.Errorf("object store %q: err = %v, want a clear ErrInvalidURL", bad, err)
		}
	}

	tb := startTestBroker(t)
	if fi, err := os.Stat(filepath.Join(tb.cfg.DataDir, "objects")); err != nil || !fi.IsDir() {
		t.Errorf("default object store directory: %v", err)
	}
}
