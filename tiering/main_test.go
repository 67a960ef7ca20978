package tiering_test

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := stopMinIO(); err != nil {
		fmt.Fprintf(os.Stderr, "tiering: stopping MinIO: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
