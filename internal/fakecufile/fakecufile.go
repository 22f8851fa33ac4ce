//go:build linux && (amd64 || arm64)

// Package fakecufile builds a fake cuFile: a shared library with the
// cuFile entry points package cuda/gds calls, for its tests on machines
// without a GPU, on top of the fake CUDA driver of internal/fakecuda
// (which it needs: its device memory is host memory). Setup points
// generated/cufile's GOCUDA_LIBCUFILE at it.
//
// The library is C (csrc/), written from the ABI of cufile.h as the
// generated bindings describe it, and compiled at test time with the
// machine's C compiler, like the fake driver. It models cuFile's
// compatibility mode: cuFileDriverOpen and cuFileDriverClose (a second
// close is CU_FILE_DRIVER_NOT_INITIALIZED); cuFileHandleRegister of a
// file descriptor (CU_FILE_DRIVER_NOT_INITIALIZED before the driver is
// open, CU_FILE_INVALID_FILE_TYPE for any other kind of handle,
// CU_FILE_HANDLE_ALREADY_REGISTERED for a descriptor registered twice)
// and cuFileHandleDeregister; cuFileRead and cuFileWrite through a host
// buffer with pread and pwrite and the fake driver's synchronous copies,
// which check the device memory: a read stops short at the end of the
// file, -1 is a file system error (errno), -CU_FILE_HANDLE_NOT_REGISTERED
// a handle not registered, -CU_FILE_CUDA_DRIVER_ERROR memory the driver
// refused. The rest of cuFile (buffer registration, batches, stream-
// ordered I/O, properties) is absent: a call of it gets an error matching
// cufile.ErrMissingFunction.
package fakecufile

import (
	"embed"

	"github.com/gocuda/gocuda/generated/cufile"
	"github.com/gocuda/gocuda/internal/cbuild"
	"github.com/gocuda/gocuda/internal/fakelib"
)

//go:embed csrc/*.c
var sources embed.FS

var fake = fakelib.Fake{
	Library: cbuild.Library{
		Name:    "fakecufile",
		What:    "the fake cuFile",
		Sources: sources,
		Dir:     "csrc",
		Shared:  []cbuild.Sources{fakelib.CSources},
		Flags:   []string{"-shared", "-fPIC", "-O2", "-fno-omit-frame-pointer", "-pthread", "-fvisibility=hidden", "-std=gnu11"},
		Libs:    []string{"-ldl"},
	},
	Env:  cufile.LibraryEnv,
	Load: cufile.Load,
	Path: cufile.LibraryPath,
}

// Build compiles the fake cuFile into dir (empty: a directory of the
// user's under os.TempDir()) and returns the library's path; a build is
// reused until the sources, compiler or flags change.
func Build(dir string) (string, error) { return fake.Build(dir) }

// Setup builds the fake cuFile and points cufile.LibraryEnv
// (GOCUDA_LIBCUFILE) at it. Call it before anything in the process calls
// generated/cufile, which opens its library once, and only where the
// process uses the fake CUDA driver.
func Setup() (string, error) { return fake.Setup() }

// Is reports whether the library at path is the fake cuFile.
func Is(path string) bool { return fake.Is(path) }

// Active reports whether generated/cufile loaded the fake cuFile
// (loading the library if it has not).
func Active() bool { return fake.Active() }
