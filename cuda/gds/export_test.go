//go:build linux && (amd64 || arm64)

package gds

import (
	"os"
	"syscall"
)

// Unregistrable says why cuFile registers no file in dir, or returns nil
// where it does: dir's filesystem, and, with udev (for the real cuFile,
// which reads udev's records), the record of its block device.
func Unregistrable(dir string, udev bool) error {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return err
	}
	if err := filesystemRefused(dir, &fs); err != nil {
		return err
	}
	if !udev {
		return nil
	}
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return err
	}
	return udevRecordError(dir, st.Dev)
}

// SetUdevData points the package's reading of udev's records at dir until
// the returned function is called.
func SetUdevData(dir string) (restore func()) {
	was := udevData
	udevData = dir
	return func() { udevData = was }
}

// UdevRecord is the path of udev's record of the block device under f.
func UdevRecord(f *os.File) string {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return ""
	}
	return udevRecordPath(st.Dev)
}
