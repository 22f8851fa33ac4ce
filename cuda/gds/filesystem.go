//go:build linux && (amd64 || arm64)

package gds

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrUnsupportedFilesystem matches the error of Open for a file on a
// filesystem where cuFile registers no file, GPUDirect Storage or not:
// tmpfs, overlay and the like. Files on ext4 and XFS register where udev
// has recorded their block device (see the package comment).
var ErrUnsupportedFilesystem = errors.New("cuFile registers no file on this filesystem")

// unregistrable names the filesystems, by their statfs magic, that cuFile
// refuses even in compatibility mode: those with no block device under
// them, where its checks of the file find nothing to take.
var unregistrable = map[int64]string{
	0x01021994: "tmpfs",
	0x794c7630: "overlay",
	0x858458f6: "ramfs",
}

// udevData is where udev keeps the properties it recorded of each device.
// cuFile reads them, through libudev, for the block device under a file it
// registers, and registers none (compatibility mode or not) on a device
// whose record lacks the filesystem's usage: in a container or a virtual
// machine without udev's database, every file.
var udevData = "/run/udev/data"

// refusal explains why cuFile refused to register f, where the reason is
// one of the two above; it returns nil otherwise.
func refusal(f *os.File) error {
	if err := filesystemError(f); err != nil {
		return err
	}
	return udevError(f)
}

func filesystemError(f *os.File) error {
	var st syscall.Statfs_t
	if err := syscall.Fstatfs(int(f.Fd()), &st); err != nil {
		return nil
	}
	return filesystemRefused(f.Name(), &st)
}

// filesystemRefused says that name is on a filesystem cuFile refuses, as
// st describes it, or returns nil.
func filesystemRefused(name string, st *syscall.Statfs_t) error {
	fs, ok := unregistrable[int64(st.Type)]
	if !ok {
		return nil
	}
	return fmt.Errorf("%s is on %s: %w (ext4 and XFS are taken)", name, fs, ErrUnsupportedFilesystem)
}

func udevError(f *os.File) error {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return nil
	}
	return udevRecordError(f.Name(), st.Dev)
}

// deviceNumbers decodes the Linux dev_t, as glibc's major and minor do.
func deviceNumbers(dev uint64) (major, minor uint64) {
	return (dev>>8)&0xfff | (dev>>32)&^uint64(0xfff), dev&0xff | (dev>>12)&^uint64(0xff)
}

// udevRecordPath is udev's record of the block device dev.
func udevRecordPath(dev uint64) string {
	major, minor := deviceNumbers(dev)
	return filepath.Join(udevData, fmt.Sprintf("b%d:%d", major, minor))
}

// udevRecordError says what udev lacks for the block device dev under
// name, or returns nil where its record has the filesystem's usage.
func udevRecordError(name string, dev uint64) error {
	major, minor := deviceNumbers(dev)
	record := udevRecordPath(dev)
	r, err := os.Open(record)
	if err != nil {
		return fmt.Errorf("udev has no record of the block device %d:%d under %s (%s), and cuFile registers no file without one, even in compatibility mode", major, minor, name, record)
	}
	defer r.Close()
	lines := bufio.NewScanner(r)
	for lines.Scan() {
		if strings.HasPrefix(lines.Text(), "E:ID_FS_USAGE=") {
			return nil
		}
	}
	return fmt.Errorf("udev's record of the block device %d:%d under %s (%s) has no ID_FS_USAGE, and cuFile registers no file without it, even in compatibility mode", major, minor, name, record)
}
