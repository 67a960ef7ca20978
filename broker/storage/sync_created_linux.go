package storage

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncFilesystem syncs the filesystem holding parent (syncfs(2)), which
// covers every directory of dirs in it.
func syncFilesystem(parent string, _ []string) error {
	f, err := os.Open(parent)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}
