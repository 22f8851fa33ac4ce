package fakecuda_test

import (
	"testing"

	"github.com/gocuda/gocuda/internal/fakecuda"
)

// TestBuildForDriver: the fake built as a CUDA 11.7 driver exports the
// entry points of 11.7 and older only, and the controls.
func TestBuildForDriver(t *testing.T) {
	path, err := fakecuda.BuildForDriver("", 11070)
	must(t, err)
	if path == lib.Path() {
		t.Fatalf("BuildForDriver gave the library Build makes: %s", path)
	}
	old, err := fakecuda.Open(path) // a second fake in this process: only its symbols are read
	must(t, err)
	for name, want := range map[string]bool{
		"cuInit": true, "cuLaunchKernel": true, "cuMemAllocAsync": true, "cuGetProcAddress": true, "cuCtxCreate_v2": true,
		"cuLaunchKernelEx": false, "cuGetProcAddress_v2": false, "cuLibraryLoadData": false, "cuCtxCreate_v4": false,
		"fakecuda_live": true, "fakecuda_function_new": true,
	} {
		if got := old.Symbol(name) != 0; got != want {
			t.Errorf("the fake as a CUDA 11.7 driver exports %s: %v, want %v", name, got, want)
		}
	}
	if _, err := fakecuda.BuildForDriver("", 117); err == nil {
		t.Error("BuildForDriver(117) built a library")
	}
}
