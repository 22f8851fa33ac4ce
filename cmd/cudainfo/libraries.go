package main

import (
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/gocuda/gocuda/cuda/blas"
	"github.com/gocuda/gocuda/cuda/fft"
	"github.com/gocuda/gocuda/cuda/nccl"
	"github.com/gocuda/gocuda/cuda/nvjitlink"
	"github.com/gocuda/gocuda/cuda/nvrtc"
	"github.com/gocuda/gocuda/cuda/rand"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/cublaslt"
	"github.com/gocuda/gocuda/generated/cudnn"
	"github.com/gocuda/gocuda/generated/cufft"
	"github.com/gocuda/gocuda/generated/cufile"
	"github.com/gocuda/gocuda/generated/curand"
	"github.com/gocuda/gocuda/generated/cusolver"
	"github.com/gocuda/gocuda/generated/cusparse"
	"github.com/gocuda/gocuda/generated/libtypes"
	rawnccl "github.com/gocuda/gocuda/generated/nccl"
	rawnvjitlink "github.com/gocuda/gocuda/generated/nvjitlink"
	"github.com/gocuda/gocuda/generated/nvjpeg"
	rawnvrtc "github.com/gocuda/gocuda/generated/nvrtc"
	"github.com/gocuda/gocuda/internal/dynlib"
)

// library is one run-time loaded library that cudainfo reports.
type library struct {
	name    string
	env     string                 // the variable that overrides its path
	version func() (string, error) // as the library numbers itself
	path    func() (string, error) // the file loaded
}

// libraries are the libraries of the bindings, in the order of the
// README's table of environment variables.
var libraries = []library{
	{"NVRTC", rawnvrtc.LibraryEnv, majorMinor(nvrtc.Version), nvrtc.LibraryPath},
	{"nvJitLink", rawnvjitlink.LibraryEnv, majorMinor(nvjitlink.Version), nvjitlink.LibraryPath},
	{"cuBLAS", cublas.LibraryEnv, encoded(blas.Version, 10000), blas.LibraryPath},
	{"cuBLASLt", cublaslt.LibraryEnv, properties(cublaslt.GetProperty), rawPath(cublaslt.Load, cublaslt.LibraryPath)},
	{"cuRAND", curand.LibraryEnv, encoded(rand.Version, 1000), rand.LibraryPath},
	{"cuFFT", cufft.LibraryEnv, encoded(fft.Version, 1000), fft.LibraryPath},
	{"cuSPARSE", cusparse.LibraryEnv, properties(cusparse.GetProperty), rawPath(cusparse.Load, cusparse.LibraryPath)},
	{"cuSOLVER", cusolver.LibraryEnv, properties(cusolver.GetProperty), rawPath(cusolver.Load, cusolver.LibraryPath)},
	{"nvJPEG", nvjpeg.LibraryEnv, properties(nvjpeg.GetProperty), rawPath(nvjpeg.Load, nvjpeg.LibraryPath)},
	{"cuFile", cufile.LibraryEnv, cufileVersion, rawPath(cufile.Load, cufile.LibraryPath)},
	{"cuDNN", cudnn.LibraryEnv, properties(cudnn.GetProperty), rawPath(cudnn.Load, cudnn.LibraryPath)},
	{"NCCL", rawnccl.LibraryEnv, encoded(nccl.Version, 10000), nccl.LibraryPath},
}

// printLibraries writes one line per library: its version and file, or
// why it did not load. A missing library is not an error of cudainfo's:
// a program needs only the libraries it calls.
func printLibraries(out io.Writer) {
	fmt.Fprintln(out, "libraries:")
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	defer w.Flush()
	for _, l := range libraries {
		path, err := l.path()
		if err != nil {
			fmt.Fprintf(w, "  %s\tmissing\t%v\n", l.name, err)
			continue
		}
		v, err := l.version()
		if err != nil {
			v = "version unknown: " + err.Error()
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\n", l.name, v, path)
	}
}

// driverPath is the file of the driver library package cu opened, which
// it opens by GOCUDA_LIBCUDA or else by the first of its two names that
// loads.
func driverPath() (string, error) {
	if p := os.Getenv(cu.LibraryEnv); p != "" {
		return dynlib.LoadedFile(p)
	}
	p, err := dynlib.LoadedFile("libcuda.so.1")
	if err != nil {
		return dynlib.LoadedFile("libcuda.so")
	}
	return p, nil
}

func majorMinor(f func() (int, int, error)) func() (string, error) {
	return func() (string, error) {
		major, minor, err := f()
		return fmt.Sprintf("%d.%d", major, minor), err
	}
}

// encoded reads a version number of the form major*base + minor*100 +
// patch as major.minor.patch, followed by the number itself.
func encoded(f func() (int, error), base int) func() (string, error) {
	return func() (string, error) {
		v, err := f()
		return fmt.Sprintf("%d.%d.%d (%d)", v/base, v%base/100, v%100, v), err
	}
}

func properties(get func(libtypes.LibraryPropertyType, *int32) error) func() (string, error) {
	return func() (string, error) {
		var v [3]int32
		for i, p := range []libtypes.LibraryPropertyType{libtypes.MAJOR_VERSION, libtypes.MINOR_VERSION, libtypes.PATCH_LEVEL} {
			if err := get(p, &v[i]); err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]), nil
	}
}

// rawPath is LibraryPath for a library that has no package of its own
// under cuda/.
func rawPath(load func() error, name func() string) func() (string, error) {
	return func() (string, error) {
		if err := load(); err != nil {
			return "", err
		}
		return dynlib.LoadedFile(name())
	}
}
