//go:build linux && (amd64 || arm64)

package gds_test

import (
	"os"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/cuda/gds"
)

// TestMain runs against the real driver and cuFile where there is a GPU,
// else against the fake driver and the fake cuFile beside it
// (cudatest.Setup points GOCUDA_LIBCUFILE at it unless it names a
// library). The temporary files of the tests and examples go where cuFile
// registers files, as it does none on tmpfs or overlay, nor (the real
// one) on a block device udev has not recorded: TMPDIR becomes
// GOCUDA_TEST_GDS_DIR where it is set, else the first of the default
// temporary directory, /var/tmp, the package's directory and the home
// directory where cuFile would register files.
func TestMain(m *testing.M) {
	cudatest.SetupIfNoDriver()
	if dir := registrableTempDir(); dir != "" {
		os.Setenv("TMPDIR", dir)
	}
	os.Exit(m.Run())
}

func registrableTempDir() string {
	if dir := os.Getenv("GOCUDA_TEST_GDS_DIR"); dir != "" {
		return dir
	}
	home, _ := os.UserHomeDir()
	for _, dir := range []string{os.TempDir(), "/var/tmp", ".", home} {
		if dir != "" && gds.Unregistrable(dir, realCuFile()) == nil && writable(dir) {
			return dir
		}
	}
	return ""
}

func writable(dir string) bool {
	f, err := os.CreateTemp(dir, ".gds-probe-")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}
