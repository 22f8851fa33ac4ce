//go:build linux && (amd64 || arm64)

package libgputest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/cublaslt"
	"github.com/gocuda/gocuda/generated/cudnn"
	"github.com/gocuda/gocuda/generated/cufft"
	"github.com/gocuda/gocuda/generated/cufile"
	"github.com/gocuda/gocuda/generated/curand"
	"github.com/gocuda/gocuda/generated/cusolver"
	"github.com/gocuda/gocuda/generated/cusparse"
	"github.com/gocuda/gocuda/generated/libtypes"
	"github.com/gocuda/gocuda/generated/nccl"
	"github.com/gocuda/gocuda/generated/nvjitlink"
	"github.com/gocuda/gocuda/generated/nvjpeg"
	"github.com/gocuda/gocuda/generated/nvrtc"
)

// A library loads once per process, so the missing-library test runs in a
// child process of the test binary whose every library path (each
// package's LibraryEnv) names a file that does not exist; childEnv holds
// the directory of those paths.
const childEnv = "GOCUDA_LIBGPUTEST_MISSING_DIR"

// boundLibrary is one raw library package: its errors, its loader, and one
// binding to call.
type boundLibrary struct {
	pkg          string
	env          string // the package's LibraryEnv
	errNoLibrary error
	errMissing   error // ErrMissingFunction
	load         func() error
	path         func() string
	call         func() error
}

func boundLibraries() []boundLibrary {
	return []boundLibrary{
		{"nvrtc", nvrtc.LibraryEnv, nvrtc.ErrNoLibrary, nvrtc.ErrMissingFunction, nvrtc.Load, nvrtc.LibraryPath,
			func() error { var maj, min int32; return nvrtc.Version(&maj, &min) }},
		{"nvjitlink", nvjitlink.LibraryEnv, nvjitlink.ErrNoLibrary, nvjitlink.ErrMissingFunction, nvjitlink.Load, nvjitlink.LibraryPath,
			func() error { var maj, min uint32; return nvjitlink.Version(&maj, &min) }},
		{"cublas", cublas.LibraryEnv, cublas.ErrNoLibrary, cublas.ErrMissingFunction, cublas.Load, cublas.LibraryPath,
			func() error { var h cublas.CublasHandle_t; return cublas.Create(&h) }},
		{"cublaslt", cublaslt.LibraryEnv, cublaslt.ErrNoLibrary, cublaslt.ErrMissingFunction, cublaslt.Load, cublaslt.LibraryPath,
			func() error { var h cublaslt.CublasLtHandle_t; return cublaslt.Create(&h) }},
		{"curand", curand.LibraryEnv, curand.ErrNoLibrary, curand.ErrMissingFunction, curand.Load, curand.LibraryPath,
			func() error {
				var gen curand.CurandGenerator_t
				return curand.CreateGenerator(&gen, curand.CURAND_RNG_PSEUDO_PHILOX4_32_10)
			}},
		{"cufft", cufft.LibraryEnv, cufft.ErrNoLibrary, cufft.ErrMissingFunction, cufft.Load, cufft.LibraryPath,
			func() error { var plan cufft.CufftHandle; return cufft.Plan1d(&plan, 8, cufft.CUFFT_C2C, 1) }},
		{"cusparse", cusparse.LibraryEnv, cusparse.ErrNoLibrary, cusparse.ErrMissingFunction, cusparse.Load, cusparse.LibraryPath,
			func() error { var h cusparse.CusparseHandle_t; return cusparse.Create(&h) }},
		{"cusolver", cusolver.LibraryEnv, cusolver.ErrNoLibrary, cusolver.ErrMissingFunction, cusolver.Load, cusolver.LibraryPath,
			func() error { var h cusolver.CusolverDnHandle_t; return cusolver.DnCreate(&h) }},
		{"nvjpeg", nvjpeg.LibraryEnv, nvjpeg.ErrNoLibrary, nvjpeg.ErrMissingFunction, nvjpeg.Load, nvjpeg.LibraryPath,
			func() error { var v int32; return nvjpeg.GetProperty(libtypes.MAJOR_VERSION, &v) }},
		{"cufile", cufile.LibraryEnv, cufile.ErrNoLibrary, cufile.ErrMissingFunction, cufile.Load, cufile.LibraryPath,
			cufile.DriverClose},
		{"cudnn", cudnn.LibraryEnv, cudnn.ErrNoLibrary, cudnn.ErrMissingFunction, cudnn.Load, cudnn.LibraryPath,
			func() error { var h cudnn.CudnnHandle_t; return cudnn.Create(&h) }},
		{"nccl", nccl.LibraryEnv, nccl.ErrNoLibrary, nccl.ErrMissingFunction, nccl.Load, nccl.LibraryPath,
			func() error { var id nccl.NcclUniqueId; return nccl.GetUniqueId(&id) }},
	}
}

// missingPath is the library path the child gives package pkg.
func missingPath(dir, pkg string) string {
	return filepath.Join(dir, "lib"+pkg+"-missing.so")
}

// TestMissingLibraryIsErrNoLibraryOfItsPackageOnly runs
// TestMissingLibraryChild in a child process with every library's path set
// to a file that does not exist. It needs no GPU and no library.
func TestMissingLibraryIsErrNoLibraryOfItsPackageOnly(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("in the child process")
	}
	dir := filepath.Join(t.TempDir(), "absent")
	cmd := exec.Command(os.Args[0], "-test.run=^TestMissingLibraryChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	for _, l := range boundLibraries() {
		cmd.Env = append(cmd.Env, l.env+"="+missingPath(dir, l.pkg))
	}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestMissingLibraryChild") {
		t.Fatalf("child process: %v\n%s", err, out)
	}
	t.Logf("child process:\n%s", out)
}

// TestMissingLibraryChild is the child of
// TestMissingLibraryIsErrNoLibraryOfItsPackageOnly: for each package, one
// binding and Load return an error that matches the package's ErrNoLibrary
// and no other package's, is a *LoadError that tried the path set, names
// that path and the variable, and is not ErrMissingFunction.
func TestMissingLibraryChild(t *testing.T) {
	dir := os.Getenv(childEnv)
	if dir == "" {
		t.Skip("runs as the child process of TestMissingLibraryIsErrNoLibraryOfItsPackageOnly")
	}
	libs := boundLibraries()
	for _, l := range libs {
		path := missingPath(dir, l.pkg)
		if got := os.Getenv(l.env); got != path {
			t.Fatalf("%s: %s = %q, want %q", l.pkg, l.env, got, path)
		}
		err := l.call()
		if err == nil {
			t.Fatalf("%s: a call with %s=%s succeeded", l.pkg, l.env, path)
		}
		if !errors.Is(err, l.errNoLibrary) {
			t.Errorf("%s: got %v, want an error matching %s.ErrNoLibrary", l.pkg, err, l.pkg)
		}
		if errors.Is(err, l.errMissing) {
			t.Errorf("%s: %v matches %s.ErrMissingFunction", l.pkg, err, l.pkg)
		}
		for _, other := range libs {
			if other.pkg != l.pkg && errors.Is(err, other.errNoLibrary) {
				t.Errorf("%s: %v matches %s.ErrNoLibrary", l.pkg, err, other.pkg)
			}
		}
		var le *nvrtc.LoadError // one type for every package (dynlib.LoadError)
		if !errors.As(err, &le) || !slices.Equal(le.Tried, []string{path}) {
			t.Errorf("%s: got %#v, want a *LoadError that tried %s only", l.pkg, err, path)
		}
		if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, l.env) || !strings.HasPrefix(msg, l.pkg+":") {
			t.Errorf("%s: error %q does not start with the package and name the path %s and the variable %s", l.pkg, msg, path, l.env)
		}
		if lerr := l.load(); !errors.Is(lerr, l.errNoLibrary) || lerr.Error() != err.Error() {
			t.Errorf("%s: Load() = %v, want the call's error %v", l.pkg, lerr, err)
		}
		if p := l.path(); p != "" {
			t.Errorf("%s: LibraryPath() = %q without a library", l.pkg, p)
		}
		t.Logf("%s: %v", l.pkg, err)
	}
	distinct := map[error]string{}
	for _, l := range libs {
		if prev, dup := distinct[l.errNoLibrary]; dup {
			t.Errorf("%s.ErrNoLibrary is %s.ErrNoLibrary", l.pkg, prev)
		}
		distinct[l.errNoLibrary] = l.pkg
	}
	t.Logf("%d library packages: each call failed with its own ErrNoLibrary naming the path tried", len(libs))
}
