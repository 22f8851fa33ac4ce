//go:build linux && (amd64 || arm64)

package cuda_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/cuda/nvrtc"
	"github.com/gocuda/gocuda/generated/cu"
	rawnvrtc "github.com/gocuda/gocuda/generated/nvrtc"
	"github.com/gocuda/gocuda/internal/nvrtctest"
)

// TestExamplesOnGPU runs the examples that have no Output comment and
// compares what they print with the output given here, as go test does
// with an Output comment. go test runs such an example wherever the tests
// run and cannot skip it, and these need more than is everywhere: NVRTC
// to compile their kernels, a toolkit's headers, thread-block clusters
// (which the fake driver does not model). Each runs on a GPU, and on the fake driver where the fake has
// what it needs, with Go versions of its kernels; otherwise it skips,
// saying why, or fails where GOCUDA_TEST_NVRTC=required says NVRTC must
// be there.
//
// The examples stop the test binary with log.Fatal when they fail, as they
// would under go test, so each one's needs are checked before it runs.
func TestExamplesOnGPU(t *testing.T) {
	for _, ex := range []struct {
		name string
		run  func()
		want string
		// ready skips or fails t where the example cannot run, and on
		// the fake driver registers Go versions of its kernels.
		ready func(t *testing.T)
	}{
		{"pipeline", Example_pipeline, "[10 20 30 40]\n", func(t *testing.T) {
			exampleDevice(t, 0, 0)
			needNVRTC(t)
			fakeKernel(t, "scale", scaleGo)
		}},
		{"twoStreams", Example_twoStreams, "[4 6 8]\n", func(t *testing.T) {
			exampleDevice(t, 0, 0)
			needNVRTC(t)
			fakePipelineKernels(t)
		}},
		{"AllocManaged", ExampleAllocManaged, "1 3 2.097151e+06\n", func(t *testing.T) {
			managedGPU(t)
			needNVRTC(t)
			fakeKernel(t, "affine", affineGo)
		}},
		{"Kernel_LaunchEx", ExampleKernel_LaunchEx, "128 0\n", func(t *testing.T) {
			dev, _ := exGPU(t, 9, 0)
			needAttribute(t, dev, cu.CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH)
			needNVRTC(t)
			needExampleHeaders(t)
		}},
		{"LaunchAttributes", ExampleLaunchAttributes, "1 3145726\n", func(t *testing.T) {
			// griddepcontrol is PTX for sm_90; the fake reports 9.0.
			exampleDevice(t, 9, 0)
			needNVRTC(t)
			fakeKernel(t, "produce", cudatest.Kernel{Params: []int{8, 4}, Thread: func(t *cudatest.Thread) {
				a, n := t.Param(0).Ptr(), t.Param(1).Uint32()
				if i := t.GlobalX(); i < int(n) {
					cudatest.Store(a, i, 3*uint32(i))
				}
			}})
			fakeKernel(t, "consume", cudatest.Kernel{Params: []int{8, 8, 4}, Thread: func(t *cudatest.Thread) {
				a, b, n := t.Param(0).Ptr(), t.Param(1).Ptr(), t.Param(2).Uint32()
				if i := t.GlobalX(); i < int(n) {
					cudatest.Store(b, i, cudatest.Load[uint32](a, i)+1)
				}
			}})
		}},
		{"Kernel_SetMaxDynamicSharedMemory", ExampleKernel_SetMaxDynamicSharedMemory,
			"limit before: 49152\nrefused: true\nlimit after: 65536\n16383 0\n", func(t *testing.T) {
				dev := exampleDevice(t, 0, 0)
				if v, err := dev.Attribute(cu.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN); err != nil || v < 64<<10 {
					t.Skipf("device 0 allows a block %d bytes of shared memory (%v); the example asks for 64 KiB", v, err)
				}
				needNVRTC(t)
				fakeKernel(t, "reverse", cudatest.Kernel{Params: []int{8, 4}, Launch: func(l *cudatest.Launch) {
					slices.Reverse(cudatest.Slice[float32](l.Param(0).Ptr(), int(l.Param(1).Uint32())))
				}})
			}},
	} {
		t.Run(ex.name, func(t *testing.T) {
			ex.ready(t)
			got := captureStdout(t, ex.run)
			if strings.TrimSpace(got) != strings.TrimSpace(ex.want) {
				t.Errorf("Example%s printed\n%s\nwant\n%s", ex.name, got, ex.want)
			}
		})
	}
}

// exampleDevice returns device 0 of the fake driver, or of the real one
// where it has compute capability major.minor or later; it skips t
// without a driver or device, or where the device is older. The GPU tests
// of launchex_gpu_test.go use it too.
func exampleDevice(t *testing.T, major, minor int) cuda.Device {
	t.Helper()
	if err := cu.Init(0); err != nil {
		if errors.Is(err, cu.ErrNoDriver) || errors.Is(err, cu.CUDA_ERROR_NO_DEVICE) {
			t.Skipf("no GPU: %v", err)
		}
		t.Fatal(err)
	}
	dev, err := cuda.GetDevice(0)
	if err != nil {
		t.Fatal(err)
	}
	maj, min, err := dev.ComputeCapability()
	if err != nil {
		t.Fatal(err)
	}
	if maj < major || maj == major && min < minor {
		t.Skipf("device 0 has compute capability %d.%d; %s needs %d.%d", maj, min, t.Name(), major, minor)
	}
	return dev
}

// needNVRTC skips t without an NVRTC library (the cached one, or
// GOCUDA_LIBNVRTC's), or fails it where NVRTC is required.
func needNVRTC(t *testing.T) {
	t.Helper()
	major := rawnvrtc.HeaderVersion() / 1000
	nvrtctest.UseCached(major)
	if err := rawnvrtc.Load(); err != nil {
		if nvrtctest.Required(major) {
			t.Fatalf("GOCUDA_TEST_NVRTC=required: no NVRTC library: %v", err)
		}
		t.Skipf("no NVRTC library to compile the example's kernels (set %s): %v", rawnvrtc.LibraryEnv, err)
	}
}

// needExampleHeaders skips t unless cooperative_groups.h is where
// ExampleKernel_LaunchEx looks for it, in a toolkit of NVRTC's major
// version, or fails it there where NVRTC is required (on a GPU: see
// compileKernels).
func needExampleHeaders(t *testing.T) {
	t.Helper()
	fail := t.Skipf
	if nvrtctest.Required(rawnvrtc.HeaderVersion() / 1000) {
		fail = t.Fatalf
	}
	dir := "/usr/local/cuda/include"
	if home := os.Getenv("CUDA_HOME"); home != "" {
		dir = filepath.Join(home, "include")
	}
	if _, err := os.Stat(filepath.Join(dir, "cooperative_groups.h")); err != nil {
		fail("the example takes cooperative_groups.h from %s (set CUDA_HOME to a toolkit): %v", dir, err)
	}
	major, minor, err := nvrtc.Version()
	if err != nil {
		t.Fatal(err)
	}
	if v := headersVersion(dir); v/1000 != major {
		fail("the headers in %s are of CUDA %d, NVRTC is %d.%d: point CUDA_HOME at a toolkit of NVRTC's version", dir, v, major, minor)
	}
}

// fakeKernel registers k under name on the fake driver, for the test; it
// does nothing on a real one.
func fakeKernel(t *testing.T, name string, k cudatest.Kernel) {
	t.Helper()
	if !cudatest.Active() {
		return
	}
	cudatest.RegisterKernel(name, k)
	t.Cleanup(func() { cudatest.UnregisterKernel(name) })
}

// captureStdout returns what f writes to os.Stdout, as go test captures an
// example's output.
func captureStdout(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		r.Close()
		out <- string(b)
	}()
	stdout := os.Stdout
	os.Stdout = w
	restore := sync.OnceValue(func() string {
		os.Stdout = stdout
		w.Close()
		return <-out
	})
	defer restore() // where f ends the test's goroutine (t.FailNow)
	f()
	return restore()
}

// scaleGo is Example_pipeline's kernel for the fake driver.
var scaleGo = cudatest.Kernel{Thread: func(t *cudatest.Thread) {
	x, a, n := t.Param(0).Ptr(), t.Param(1).Float32(), t.Param(2).Uint32()
	if i := t.GlobalX(); i < int(n) {
		cudatest.Store(x, i, a*cudatest.Load[float32](x, i))
	}
}}

// fakePipelineKernels registers Example_twoStreams' kernels on the fake
// driver.
func fakePipelineKernels(t *testing.T) {
	fakeKernel(t, "produce", cudatest.Kernel{Thread: func(t *cudatest.Thread) {
		x, y, n := t.Param(0).Ptr(), t.Param(1).Ptr(), t.Param(2).Uint32()
		if i := t.GlobalX(); i < int(n) {
			cudatest.Store(y, i, cudatest.Load[float32](x, i)+1)
		}
	}})
	fakeKernel(t, "consume", cudatest.Kernel{Thread: func(t *cudatest.Thread) {
		y, z, n := t.Param(0).Ptr(), t.Param(1).Ptr(), t.Param(2).Uint32()
		if i := t.GlobalX(); i < int(n) {
			cudatest.Store(z, i, 2*cudatest.Load[float32](y, i))
		}
	}})
}

// TestTwoStreamsWithoutWaitIsARace: the two-stream example without its
// WaitFor is reported by the fake driver's race detector, naming the
// producer's write and the consumer's read; with it, nothing is.
func TestTwoStreamsWithoutWaitIsARace(t *testing.T) {
	if !cudatest.Active() {
		t.Skip("the race detector is the fake driver's: this run uses a real one")
	}
	exampleDevice(t, 0, 0)
	needNVRTC(t)
	fakePipelineKernels(t)
	_ = cudatest.TakeRaces()
	if _, err := twoStreams([]float32{1, 2, 3}, true); err != nil {
		t.Fatal(err)
	}
	if races := cudatest.TakeRaces(); len(races) != 0 {
		t.Fatalf("with WaitFor: %d races, first %s", len(races), races[0].Summary())
	}
	if _, err := twoStreams([]float32{1, 2, 3}, false); err != nil {
		t.Fatal(err)
	}
	races := cudatest.TakeRaces()
	if len(races) == 0 {
		t.Fatal("without WaitFor: no race reported")
	}
	if sum := races[0].Summary(); !strings.Contains(sum, "kernel") {
		t.Errorf("race report %q does not name the kernels", sum)
	}
}
