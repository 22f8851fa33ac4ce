//go:build linux && (amd64 || arm64)

// Package fakecurand builds a fake cuRAND: a shared library with the
// cuRAND entry points package generated/curand loads, for tests of
// package cuda/rand on machines without a GPU, on top of the fake CUDA
// driver of internal/fakecuda (which it needs: its device memory is host
// memory). Setup points generated/curand's GOCUDA_LIBCURAND at it.
//
// The library is C (csrc/), written from the ABI of curand.h as the
// generated bindings describe it, and compiled at test time with the
// machine's C compiler, like the fake driver. What it models:
//
//   - curandCreateGenerator and curandCreateGeneratorHost of the
//     pseudo-random types PHILOX4_32_10, XORWOW (and PSEUDO_DEFAULT, which
//     is XORWOW), MRG32K3A and MT19937, each its documented algorithm
//     (csrc/engines.c); MTGP32 and the quasi-random Sobol types are
//     refused with CURAND_STATUS_TYPE_ERROR, saying so on standard error;
//   - curandDestroyGenerator, curandSetStream,
//     curandSetPseudoRandomGeneratorSeed (default seed 0),
//     curandSetGeneratorOffset (which skips that many 32-bit numbers;
//     CURAND_STATUS_TYPE_ERROR for MT19937, which has none),
//     curandSetGeneratorOrdering (every pseudo-random ordering accepted,
//     all giving the one order the fake has), curandGenerateSeeds,
//     curandSetQuasiRandomGeneratorDimensions (CURAND_STATUS_TYPE_ERROR: no
//     generator here is quasi-random), curandGetVersion and
//     curandGetProperty (FAKECURAND_VERSION, which Setup sets to the
//     CURAND_VERSION of the bindings); a handle that is not a live
//     generator gets CURAND_STATUS_NOT_INITIALIZED rather than being
//     followed;
//   - curandGenerate, curandGenerateUniform(Double), curandGenerateNormal(Double),
//     curandGenerateLogNormal(Double) and curandGeneratePoisson with
//     cuRAND's rules: uniform numbers in (0, 1], normal ones in pairs from
//     Box-Muller (an odd count is CURAND_STATUS_LENGTH_NOT_MULTIPLE), a
//     positive lambda; curandGenerateLongLong is for the 64-bit
//     quasi-random generators: CURAND_STATUS_TYPE_ERROR
//     (csrc/distributions.c).
//
// The numbers are made on the calling thread and copied to the user's
// memory by an asynchronous copy queued on the generator's stream, so
// they arrive in stream order, the fake driver checks the memory (outside
// its allocations: CURAND_STATUS_LAUNCH_FAILURE) and its race detector
// sees the write (csrc/generator.c).
//
// A device generator's calls need the context of its stream current, as
// package cuda makes it around each call (cuRAND, through the runtime,
// would take the primary context instead).
//
// Where it is simpler than cuRAND: the algorithms are cuRAND's but not
// the order of the numbers, which cuRAND spreads over GPU threads in an
// undocumented way (and its seeding of MRG32k3a and MT19937), so the same
// seed gives other numbers than cuRAND's, with the same distribution; the
// generation takes host time, not modeled device time; a stream being
// captured into a graph is refused (CURAND_STATUS_LAUNCH_FAILURE); the
// binomial and discrete distributions are absent, so a call of them gets
// an error matching curand.ErrMissingFunction.
package fakecurand

import (
	"embed"

	"github.com/gocuda/gocuda/generated/curand"
	"github.com/gocuda/gocuda/internal/cbuild"
	"github.com/gocuda/gocuda/internal/fakelib"
)

// VersionEnv names the variable whose value curandGetVersion reports.
const VersionEnv = "FAKECURAND_VERSION"

//go:embed csrc/*.c csrc/*.h
var sources embed.FS

// fake is the fake's build and what loads it. Frame pointers let the
// fake driver's race detector walk from the driver's frames through the
// fake's into those of the Go code that called it.
var fake = fakelib.Fake{
	Library: cbuild.Library{
		Name:    "fakecurand",
		What:    "the fake cuRAND",
		Sources: sources,
		Dir:     "csrc",
		Shared:  []cbuild.Sources{fakelib.CSources},
		Flags:   []string{"-shared", "-fPIC", "-O2", "-fno-omit-frame-pointer", "-pthread", "-fvisibility=hidden", "-std=gnu11"},
		Libs:    []string{"-ldl", "-lm"},
	},
	Env:        curand.LibraryEnv,
	VersionEnv: VersionEnv,
	Version:    curand.CURAND_VERSION,
	Load:       curand.Load,
	Path:       curand.LibraryPath,
}

// Build compiles the fake cuRAND into dir (empty: a directory of the
// user's under os.TempDir()) and returns the library's path; a build is
// reused until the sources, compiler or flags change.
func Build(dir string) (string, error) { return fake.Build(dir) }

// Setup builds the fake cuRAND and points curand.LibraryEnv
// (GOCUDA_LIBCURAND) at it, with VersionEnv set to the bindings'
// curand.CURAND_VERSION unless it is set already. Call it before anything
// in the process calls generated/curand, which opens its library once,
// and only where the process uses the fake CUDA driver.
func Setup() (string, error) { return fake.Setup() }

// Is reports whether the library at path is the fake cuRAND.
func Is(path string) bool { return fake.Is(path) }

// Active reports whether generated/curand loaded the fake cuRAND
// (loading the library if it has not).
func Active() bool { return fake.Active() }
