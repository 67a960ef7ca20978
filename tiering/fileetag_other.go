//go:build !unix

package tiering

import (
	"fmt"
	"os"
)

// fileETag derives a version token from the modification time and size.
func fileETag(info os.FileInfo) string {
	return fmt.Sprintf("%x-%x", info.ModTime().UnixNano(), info.Size())
}
