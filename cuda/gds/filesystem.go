//go:build linux && (amd64 || arm64)

package gds

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ErrUnsupportedFilesystem matches the error of Open for a file on a
// filesystem where cuFile registers no file, GPUDirect Storage or not:
// tmpfs, overlay and the like. Files on ext4 and XFS register everywhere.
var ErrUnsupportedFilesystem = errors.New("cuFile registers no file on this filesystem")

// unregistrable names the filesystems, by their statfs magic, that cuFile
// refuses even in compatibility mode: those with no block device under
// them, where its checks of the file find nothing to take.
var unregistrable = map[int64]string{
	0x01021994: "tmpfs",
	0x794c7630: "overlay",
	0x858458f6: "ramfs",
}

// filesystemError explains why cuFile refused to register f, where f's
// filesystem is one it never takes; it returns nil otherwise.
func filesystemError(f *os.File) error {
	var st syscall.Statfs_t
	if err := syscall.Fstatfs(int(f.Fd()), &st); err != nil {
		return nil
	}
	name, ok := unregistrable[int64(st.Type)]
	if !ok {
		return nil
	}
	return fmt.Errorf("%s is on %s: %w (ext4 and XFS are taken)", f.Name(), name, ErrUnsupportedFilesystem)
}
