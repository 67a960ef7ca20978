//go:build unix

package tiering

import (
	"fmt"
	"os"
	"syscall"
)

// fileETag derives a version token from the inode, modification time and
// size. Put renames a new file into place, so an overwrite always changes
// the inode even when the clock has not ticked.
func fileETag(info os.FileInfo) string {
	var inode uint64
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		inode = uint64(st.Ino)
	}
	return fmt.Sprintf("%x-%x-%x", inode, info.ModTime().UnixNano(), info.Size())
}
