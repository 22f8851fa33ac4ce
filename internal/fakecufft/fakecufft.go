//go:build linux && (amd64 || arm64)

// Package fakecufft builds a fake cuFFT: a shared library with the cuFFT
// entry points package generated/cufft loads, for tests of package
// cuda/fft on machines without a GPU, on top of the fake CUDA driver of
// internal/fakecuda (which it needs: its device memory is host memory).
// Setup points generated/cufft's GOCUDA_LIBCUFFT at it.
//
// The library is C (csrc/), written from the ABI of cufft.h as the
// generated bindings describe it, and compiled at test time with the
// machine's C compiler, like the fake driver. What it models:
//
//   - plans: cufftCreate, cufftDestroy, cufftMakePlan1d/2d/3d,
//     cufftMakePlanMany, cufftMakePlanMany64, cufftPlan1d/2d/3d and
//     cufftPlanMany, of 1 to 3 dimensions, any sizes, batched, with the
//     advanced layout of embeds, strides and distances as cufftPlanMany
//     documents it, or the basic layout when an embed is NULL (packed; in
//     place, a real side's rows padded to the complex side's); the checks
//     of kind (CUFFT_INVALID_TYPE), sizes (CUFFT_INVALID_SIZE) and the
//     other arguments (CUFFT_INVALID_VALUE); a handle that is not a live
//     plan gets CUFFT_INVALID_PLAN (csrc/plan.c);
//   - cufftSetStream, cufftGetSize, cufftSetAutoAllocation and
//     cufftSetWorkArea (the fake needs no work area: every planner
//     reports 0 bytes), cufftGetVersion and cufftGetProperty
//     (FAKECUFFT_VERSION, which Setup sets to the CUFFT_VERSION of the
//     bindings);
//   - cufftExecC2C, Z2Z (forward and inverse), R2C, D2Z, C2R and Z2D, in
//     place and out of place, unnormalized as cuFFT's, run in stream order
//     on the plan's stream (csrc/exec.c): a copy of the input to the host,
//     the transform in a host function of the fake driver, a copy of the
//     result back, so the driver checks the memory (outside its
//     allocations: CUFFT_EXEC_FAILED) and its race detector sees the
//     reads and writes. The transform is computed in double precision for
//     every type, by radix-2 and Bluestein FFTs (csrc/transform.c): float
//     results are within float rounding of the exact transform, closer
//     than cuFFT's own.
//
// A transform needs the context of the plan's stream current, as package
// cuda makes it around each call.
//
// Where it is simpler than cuFFT: the transform takes host time, not
// modeled device time; C2R and Z2D leave their input as it was (cuFFT may
// overwrite it); an output laid out with gaps is read as well as written
// (the gaps keep what they held), which the race detector sees as a read
// of the gaps; a stream being captured into a graph is refused
// (CUFFT_NOT_SUPPORTED); the callbacks, the multi-GPU (cufftXt*)
// functions and the estimates are absent, so a call of them gets an
// error matching cufft.ErrMissingFunction.
package fakecufft

import (
	"embed"

	"github.com/gocuda/gocuda/generated/cufft"
	"github.com/gocuda/gocuda/internal/cbuild"
	"github.com/gocuda/gocuda/internal/fakelib"
)

// VersionEnv names the variable whose value cufftGetVersion reports.
const VersionEnv = "FAKECUFFT_VERSION"

//go:embed csrc/*.c csrc/*.h
var sources embed.FS

// fake is the fake's build and what loads it. Frame pointers let the
// fake driver's race detector walk from the driver's frames through the
// fake's into those of the Go code that called it.
var fake = fakelib.Fake{
	Library: cbuild.Library{
		Name:    "fakecufft",
		What:    "the fake cuFFT",
		Sources: sources,
		Dir:     "csrc",
		Shared:  []cbuild.Sources{fakelib.CSources},
		Flags:   []string{"-shared", "-fPIC", "-O2", "-fno-omit-frame-pointer", "-pthread", "-fvisibility=hidden", "-std=gnu11"},
		Libs:    []string{"-ldl", "-lm"},
	},
	Env:        cufft.LibraryEnv,
	VersionEnv: VersionEnv,
	Version:    cufft.CUFFT_VERSION,
	Load:       cufft.Load,
	Path:       cufft.LibraryPath,
}

// Build compiles the fake cuFFT into dir (empty: a directory of the
// user's under os.TempDir()) and returns the library's path; a build is
// reused until the sources, compiler or flags change.
func Build(dir string) (string, error) { return fake.Build(dir) }

// Setup builds the fake cuFFT and points cufft.LibraryEnv
// (GOCUDA_LIBCUFFT) at it, with VersionEnv set to the bindings'
// cufft.CUFFT_VERSION unless it is set already. Call it before anything
// in the process calls generated/cufft, which opens its library once, and
// only where the process uses the fake CUDA driver.
func Setup() (string, error) { return fake.Setup() }

// Is reports whether the library at path is the fake cuFFT.
func Is(path string) bool { return fake.Is(path) }

// Active reports whether generated/cufft loaded the fake cuFFT
// (loading the library if it has not).
func Active() bool { return fake.Active() }
