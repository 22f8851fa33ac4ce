//go:build linux && (amd64 || arm64)

package fakecublas_test

import (
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/cublaslt"
	"github.com/gocuda/gocuda/generated/libtypes"
	"github.com/gocuda/gocuda/internal/fakecublas"
)

// TestVersionAndStatusStrings: the fake reports the version of the
// bindings' CUDA, through each of cuBLAS's and cuBLASLt's calls, and
// names its statuses as cuBLAS does.
func TestVersionAndStatusStrings(t *testing.T) {
	e := setup(t)
	want := fakecublas.Version(cublas.HeaderVersion())
	var v [3]int32
	for i, p := range []libtypes.LibraryPropertyType{libtypes.MAJOR_VERSION, libtypes.MINOR_VERSION, libtypes.PATCH_LEVEL} {
		if err := cublas.GetProperty(p, &v[i]); err != nil {
			t.Fatal(err)
		}
	}
	if got := int(v[0])*10000 + int(v[1])*100 + int(v[2]); got != want || int(v[0]) != cublas.HeaderVersion()/1000 {
		t.Errorf("cublasGetProperty: %d.%d.%d, want %d", v[0], v[1], v[2], want)
	}
	var hv int32
	if err := cublas.GetVersion(e.h, &hv); err != nil || int(hv) != want {
		t.Errorf("cublasGetVersion: %d, %v; want %d", hv, err, want)
	}
	if lv, err := cublaslt.GetVersion(); err != nil || int(lv) != want {
		t.Errorf("cublasLtGetVersion: %d, %v; want %d", lv, err, want)
	}
	name, err := cublas.GetStatusName(cublas.CUBLAS_STATUS_NOT_SUPPORTED)
	if err != nil {
		t.Fatal(err)
	}
	if got := cString(name); got != "CUBLAS_STATUS_NOT_SUPPORTED" {
		t.Errorf("cublasGetStatusName = %q", got)
	}
	if s, err := cublas.GetStatusString(cublas.CUBLAS_STATUS_INVALID_VALUE); err != nil || cString(s) == "" {
		t.Errorf("cublasGetStatusString = %q, %v", cString(s), err)
	}
	var mode cublas.CublasMath_t
	if err := cublas.SetMathMode(e.h, cublas.CUBLAS_TF32_TENSOR_OP_MATH); err != nil {
		t.Fatal(err)
	}
	if err := cublas.GetMathMode(e.h, &mode); err != nil || mode != cublas.CUBLAS_TF32_TENSOR_OP_MATH {
		t.Errorf("math mode %d, %v after setting TF32", mode, err)
	}
}

// cString reads a C string the fake returned (static storage).
func cString(p *byte) string {
	if p == nil {
		return ""
	}
	var b []byte
	for q := unsafe.Pointer(p); *(*byte)(q) != 0; q = unsafe.Add(q, 1) {
		b = append(b, *(*byte)(q))
	}
	return string(b)
}
