package cuda

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/gocuda/gocuda/generated/cu"
)

const noDriverChildEnv = "GOCUDA_TEST_NODRIVER_CHILD"

// TestNoDriver runs TestNoDriverChild in a process whose driver path points
// nowhere, so it checks the no-driver errors on machines with a GPU too: the
// driver is loaded once per process and cannot be unloaded in this one.
func TestNoDriver(t *testing.T) {
	if os.Getenv(noDriverChildEnv) != "" {
		t.Skip("in the child")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoDriverChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), noDriverChildEnv+"=1", cu.LibraryEnv+"=/nonexistent/libcuda.so.1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child failed: %v\n%s", err, out)
	}
	t.Logf("child:\n%s", out)
}

func TestNoDriverChild(t *testing.T) {
	if os.Getenv(noDriverChildEnv) == "" {
		t.Skip("runs only as TestNoDriver's child process")
	}
	isNoDriver := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNoDriver) || !errors.Is(err, cu.ErrNoDriver) {
			t.Errorf("%s = %v, want an error matching ErrNoDriver", name, err)
			return
		}
		var e *Error
		if !errors.As(err, &e) || e.Func == "" {
			t.Errorf("%s = %v, want an *Error naming the C function", name, err)
		}
	}
	_, err := Devices()
	isNoDriver("Devices", err)
	_, err = DeviceCount()
	isNoDriver("DeviceCount", err)
	_, err = GetDevice(0)
	isNoDriver("GetDevice", err)
	_, err = PrimaryContext(Device{})
	isNoDriver("PrimaryContext", err)
	_, err = NewContext(Device{})
	isNoDriver("NewContext", err)
	_, err = Device{}.Name()
	isNoDriver("Device.Name", err)
	if c, s, e := LiveHandles(); c+s+e != 0 {
		t.Errorf("failed constructors left live handles: %d %d %d", c, s, e)
	}
}
