package main

/*
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

typedef int (*nb_create_t)(uintptr_t *, const char *, const char *, int, const char *const *, const char *const *);
typedef int (*nb_compile_t)(uintptr_t, int, const char *const *);
typedef int (*nb_size_t)(uintptr_t, size_t *);
typedef int (*nb_get_t)(uintptr_t, char *);
typedef int (*nb_destroy_t)(uintptr_t *);

// The NVRTC entry points package generated/nvrtc resolved: C calls the
// same library the Go bindings call.
struct nb_entries {
	uintptr_t create, compile, log_size, log, ptx_size, ptx, destroy;
};

// nb_compile compiles src as a C program would, making the NVRTC calls
// cuda/nvrtc.Compile makes (create, compile, the log, the PTX, destroy).
// It returns 0 or the failing call's nvrtcResult; *ptx, when not NULL,
// receives the PTX (malloc'd, the caller frees it).
static int nb_compile(const struct nb_entries *e, const char *src, int nopts, const char *const *opts, char **ptx) {
	uintptr_t prog;
	size_t n;
	int r = ((nb_create_t)e->create)(&prog, src, "program.cu", 0, 0, 0);
	if (r) return r;
	r = ((nb_compile_t)e->compile)(prog, nopts, opts);
	if (!r) r = ((nb_size_t)e->log_size)(prog, &n);
	if (!r) {
		char *log = malloc(n);
		r = ((nb_get_t)e->log)(prog, log);
		free(log);
	}
	if (!r) r = ((nb_size_t)e->ptx_size)(prog, &n);
	if (!r) {
		char *p = malloc(n);
		r = ((nb_get_t)e->ptx)(prog, p);
		if (ptx && !r) *ptx = p; else free(p);
	}
	int d = ((nb_destroy_t)e->destroy)(&prog);
	return r ? r : d;
}

// nb_timed makes n compiles and returns nanoseconds per compile, timed in
// C; negative: the nvrtcResult of a failure.
static double nb_timed(const struct nb_entries *e, const char *src, int nopts, const char *const *opts, int n) {
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++) {
		int r = nb_compile(e, src, nopts, opts, 0);
		if (r) return -r;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
}
*/
import "C"

import (
	"bytes"
	"fmt"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/cuda/nvrtc"
	rawnvrtc "github.com/gocuda/gocuda/generated/nvrtc"
)

// nvrtcSource is the kernel every side compiles, to PTX for a fixed
// virtual architecture so that the GPU (or its absence) does not matter.
const (
	nvrtcSource = `
extern "C" __global__ void vadd(const float *a, const float *b, float *c, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) c[i] = a[i] + b[i];
}
`
	nvrtcArch = "compute_90"
)

// compileRaw is nb_compile through the raw bindings: the same calls, the
// source, name and options prepared once as a Go program using the raw
// layer would.
func compileRaw(src, name *byte, nopts int32, opts **byte) ([]byte, error) {
	var prog rawnvrtc.NvrtcProgram
	if err := rawnvrtc.CreateProgram(&prog, src, name, 0, nil, nil); err != nil {
		return nil, err
	}
	defer rawnvrtc.DestroyProgram(&prog)
	if err := rawnvrtc.CompileProgram(prog, nopts, opts); err != nil {
		return nil, err
	}
	var n uint64
	if err := rawnvrtc.GetProgramLogSize(prog, &n); err != nil {
		return nil, err
	}
	log := make([]byte, n)
	if err := rawnvrtc.GetProgramLog(prog, &log[0]); err != nil {
		return nil, err
	}
	if err := rawnvrtc.GetPTXSize(prog, &n); err != nil {
		return nil, err
	}
	ptx := make([]byte, n)
	if err := rawnvrtc.GetPTX(prog, &ptx[0]); err != nil {
		return nil, err
	}
	return ptx, nil
}

// runNVRTC compares compiling one small kernel from C, through the raw
// bindings and through cuda/nvrtc.Compile, in one process: each round
// times a chunk of compiles of each side, in an order that rotates every
// round, so that drift hits the three alike. It prints one RESULT line per
// side (the medians, for bench/report) and an NVRTC line with the medians
// of the per-round ratios to C.
func runNVRTC() {
	const rounds, per = 61, 1
	entry := func(name string) C.uintptr_t {
		p, err := rawnvrtc.Proc(name)
		must("nvrtc.Proc "+name, err)
		return C.uintptr_t(p)
	}
	e := (*C.struct_nb_entries)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_nb_entries{}))))
	defer C.free(unsafe.Pointer(e))
	*e = C.struct_nb_entries{
		create: entry("nvrtcCreateProgram"), compile: entry("nvrtcCompileProgram"),
		log_size: entry("nvrtcGetProgramLogSize"), log: entry("nvrtcGetProgramLog"),
		ptx_size: entry("nvrtcGetPTXSize"), ptx: entry("nvrtcGetPTX"), destroy: entry("nvrtcDestroyProgram"),
	}
	major, minor, err := nvrtc.Version()
	must("nvrtc.Version", err)
	csrc, cname := C.CString(nvrtcSource), C.CString("program.cu")
	copts := (**C.char)(C.malloc(C.size_t(unsafe.Sizeof(uintptr(0)))))
	*copts = C.CString("-arch=" + nvrtcArch)
	defer C.free(unsafe.Pointer(csrc))
	defer C.free(unsafe.Pointer(cname))
	defer C.free(unsafe.Pointer(copts))
	defer C.free(unsafe.Pointer(*copts))

	// Once each, untimed: loads NVRTC's builtins, and checks that the
	// three make the same PTX.
	var cptx *C.char
	if r := C.nb_compile(e, csrc, 1, copts, &cptx); r != 0 {
		must("C compile", rawnvrtc.NvrtcResult(r))
	}
	fromC := C.GoString(cptx)
	C.free(unsafe.Pointer(cptx))
	fromRaw, err := compileRaw((*byte)(unsafe.Pointer(csrc)), (*byte)(unsafe.Pointer(cname)), 1, (**byte)(unsafe.Pointer(copts)))
	must("raw compile", err)
	// Without the compile cache: the entry measures NVRTC compiling, which
	// a cache hit would skip.
	fromSafe, err := nvrtc.Compile(nvrtcSource, nvrtc.WithArch(nvrtcArch), nvrtc.WithoutCache())
	must("nvrtc.Compile", err)
	if string(bytes.TrimRight(fromRaw, "\x00")) != fromC || string(fromSafe.PTX) != fromC {
		must("compare PTX", fmt.Errorf("the three compiles made different PTX"))
	}

	names := []string{"c", "go-raw", "go-cuda"}
	sides := []func() float64{
		func() float64 {
			ns := float64(C.nb_timed(e, csrc, 1, copts, per))
			if ns < 0 {
				must("C compile", rawnvrtc.NvrtcResult(-ns))
			}
			return ns
		},
		func() float64 {
			t := time.Now()
			for i := 0; i < per; i++ {
				_, err := compileRaw((*byte)(unsafe.Pointer(csrc)), (*byte)(unsafe.Pointer(cname)), 1, (**byte)(unsafe.Pointer(copts)))
				must("raw compile", err)
			}
			return float64(time.Since(t).Nanoseconds()) / per
		},
		func() float64 {
			t := time.Now()
			for i := 0; i < per; i++ {
				_, err := nvrtc.Compile(nvrtcSource, nvrtc.WithArch(nvrtcArch), nvrtc.WithoutCache())
				must("nvrtc.Compile", err)
			}
			return float64(time.Since(t).Nanoseconds()) / per
		},
	}
	ms := make([][]float64, len(sides))
	for r := 0; r < rounds; r++ {
		for i := range sides {
			s := (i + r) % len(sides)
			ms[s] = append(ms[s], sides[s]()/1e6)
		}
	}
	ratios := func(s int) []float64 {
		v := make([]float64, rounds)
		for r := range v {
			v[r] = ms[s][r] / ms[0][r]
		}
		return v
	}
	raw, safe := ratios(1), ratios(2)
	for s, name := range names {
		fmt.Printf("RESULT impl=%s op=nvrtc_compile value=%.3f unit=ms/op\n", name, median(ms[s]))
	}
	fmt.Printf("NVRTC op=compile_vadd_%s library=%s version=%d.%d c_median=%.3f go_raw_median=%.3f go_cuda_median=%.3f raw_ratio=%.4f raw_ratio_p25=%.4f raw_ratio_p75=%.4f cuda_ratio=%.4f cuda_ratio_p25=%.4f cuda_ratio_p75=%.4f unit=ms/compile rounds=%d compiles_per_round=%d\n",
		nvrtcArch, rawnvrtc.LibraryPath(), major, minor, median(ms[0]), median(ms[1]), median(ms[2]),
		median(raw), quantile(raw, 0.25), quantile(raw, 0.75), median(safe), quantile(safe, 0.25), quantile(safe, 0.75), rounds, per)
}
