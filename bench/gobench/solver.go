package main

/*
#include <stddef.h>
#include <stdint.h>

// The entry points the C loop calls, as generated/cu and
// generated/cusolver resolved them: the same driver and library as Go's.
struct sv_fns {
	uintptr_t copy, sync, dtoh;
	uintptr_t getrf_bs, getrf, potrf_bs, potrf, syevd_bs, syevd;
};

typedef int (*sv_copy_t)(unsigned long long, unsigned long long, size_t, uintptr_t);
typedef int (*sv_sync_t)(uintptr_t);
typedef int (*sv_dtoh_t)(void *, unsigned long long, size_t);
typedef int (*sv_getrf_bs_t)(uintptr_t, int, int, double *, int, int *);
typedef int (*sv_getrf_t)(uintptr_t, int, int, double *, int, double *, int *, int *);
typedef int (*sv_potrf_bs_t)(uintptr_t, int, int, double *, int, int *);
typedef int (*sv_potrf_t)(uintptr_t, int, int, double *, int, double *, int, int *);
typedef int (*sv_syevd_bs_t)(uintptr_t, int, int, int, const double *, int, const double *, int *);
typedef int (*sv_syevd_t)(uintptr_t, int, int, int, double *, int, double *, double *, int, int *);

enum { SV_GETRF, SV_POTRF, SV_SYEVD };

// sv_loop makes calls solves as a C program would, in one cgo call: each
// restores A from A0 (a copy on the stream), asks for the workspace size,
// factors, waits for the stream and reads info. The workspace is the
// caller's, big enough. It returns 0, or where it stopped: 1 the driver
// (code its CUresult), 2 cuSOLVER (its status), 3 a non-zero info.
static int sv_loop(struct sv_fns f, int op, uintptr_t h, uintptr_t stream, int n, uintptr_t a, uintptr_t a0,
		uintptr_t work, uintptr_t ipiv, uintptr_t w, uintptr_t dinfo, int calls, int *code) {
	for (int i = 0; i < calls; i++) {
		int r = ((sv_copy_t)f.copy)(a, a0, (size_t)n * n * sizeof(double), stream);
		if (r) { *code = r; return 1; }
		int lwork = 0;
		switch (op) {
		case SV_GETRF:
			r = ((sv_getrf_bs_t)f.getrf_bs)(h, n, n, (double *)a, n, &lwork);
			if (!r) r = ((sv_getrf_t)f.getrf)(h, n, n, (double *)a, n, (double *)work, (int *)ipiv, (int *)dinfo);
			break;
		case SV_POTRF:
			r = ((sv_potrf_bs_t)f.potrf_bs)(h, 0, n, (double *)a, n, &lwork);
			if (!r) r = ((sv_potrf_t)f.potrf)(h, 0, n, (double *)a, n, (double *)work, lwork, (int *)dinfo);
			break;
		case SV_SYEVD:
			r = ((sv_syevd_bs_t)f.syevd_bs)(h, 1, 0, n, (double *)a, n, (double *)w, &lwork);
			if (!r) r = ((sv_syevd_t)f.syevd)(h, 1, 0, n, (double *)a, n, (double *)w, (double *)work, lwork, (int *)dinfo);
			break;
		}
		if (r) { *code = r; return 2; }
		r = ((sv_sync_t)f.sync)(stream);
		if (r) { *code = r; return 1; }
		int info = 0;
		r = ((sv_dtoh_t)f.dtoh)(&info, dinfo, sizeof info);
		if (r) { *code = r; return 1; }
		if (info) { *code = info; return 3; }
	}
	return 0;
}
*/
import "C"

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/solver"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/cusolver"
)

var (
	solverSizes   = flag.String("solver-sizes", "256,1024,4096", "-impl solver: the orders n of the n×n float64 matrices, comma-separated")
	solverOps     = flag.String("solver-ops", "getrf,potrf,syevd", "-impl solver: getrf (LU), potrf (Cholesky, lower), syevd (eigenvalues and vectors, lower)")
	solverSamples = flag.Int("solver-samples", 9, "-impl solver: timed samples per implementation and case")
	solverMs      = flag.Float64("solver-ms", 200, "-impl solver: the time one sample aims at, in ms (sets the solves per sample)")
)

// solverCase is one factorization the benchmark times.
type solverCase struct {
	op   string // the RESULT lines' op: solver_<kind>_<n>
	kind string // getrf, potrf or syevd
	n    int
}

// solverBench is what every implementation works on: the primary context
// of device 0, current on the benchmark's locked thread, a stream, the raw
// cuSOLVER handle C and Go raw share, and the memory. Each solve restores
// A from A0 first (a copy on the stream, in every implementation), so that
// every call factors the same matrix: random for getrf, symmetric positive
// definite for potrf and syevd.
type solverBench struct {
	ctx    *cuda.Context
	s      *cuda.Stream
	stream cu.CUstream
	handle cusolver.CusolverDnHandle_t

	a, general, spd *cuda.Slice[float64] // A, and the two A0s
	w               *cuda.Slice[float64] // eigenvalues
	ipiv            *cuda.Slice[int32]
	work            *cuda.DeviceMemory // the largest workspace of any case, for C and Go raw
	// workPool is as large, from the stream's memory pool (cuMemAllocAsync)
	// as cuda/solver's is, for go-raw-poolws: the raw loop on it tells
	// what the kind of memory costs apart from the package.
	workPool *cuda.DeviceMemory
	info     *cuda.DeviceMemory

	gen    []float64 // general's values
	spdFor int       // the order spd holds a matrix of, 0 for none
}

// solverImpl enqueues and waits for calls solves of a case; it returns an
// error for a failure or a non-zero info.
type solverImpl struct {
	name string
	run  func(sc solverCase, calls int) error
}

// solverCases parses -solver-sizes and -solver-ops.
func solverCases() ([]solverCase, int, error) {
	pairs, maxN, err := sizeKinds("-solver-sizes", *solverSizes, "-solver-ops", *solverOps, "operation", "getrf", "potrf", "syevd")
	if err != nil {
		return nil, 0, err
	}
	var cases []solverCase
	for _, p := range pairs {
		cases = append(cases, solverCase{op: fmt.Sprintf("solver_%s_%d", p.kind, p.size), kind: p.kind, n: p.size})
	}
	if *solverSamples < 1 || *solverMs <= 0 {
		return nil, 0, errors.New("-solver-samples and -solver-ms must be positive")
	}
	return cases, maxN, nil
}

// runSolver times getrf, potrf and syevd, each a whole solve as a program
// makes it (restore A, size the workspace, factor, wait, read info), from
// a C loop, from the raw bindings (in a workspace from cuMemAlloc, and
// in one from the stream's pool) and from cuda/solver (whose handle keeps
// its workspace from the pool), in one process: per case,
// after a warm-up that checks info, -solver-samples rounds of one sample
// per implementation, the order rotating every round. It prints a RESULT
// line per implementation and case (the median µs per solve) and a
// SOLVER line per Go implementation: the median of its per-round ratio of
// time per solve to C's.
func runSolver() {
	cases, maxN, err := solverCases()
	must("solver flags", err)
	b := newSolverBench(maxN, cases)
	impls := []solverImpl{{"c", b.cLoop()}, {"go-raw", b.rawLoopOn(b.work)}, {"go-raw-poolws", b.rawLoopOn(b.workPool)}, {"go-cuda", b.safeLoop()}}
	for _, sc := range cases {
		for _, im := range impls {
			must(im.name+" "+sc.op+" warm-up", im.run(sc, 2))
		}
		// Solves per sample, from a probe of C's.
		const probe = 3
		t := time.Now()
		must("c "+sc.op, impls[0].run(sc, probe))
		per := time.Since(t).Seconds() / probe
		calls := max(3, min(100000, int(*solverMs*1e-3/per)))
		us := make([][]float64, len(impls))
		for r := 0; r < *solverSamples; r++ {
			for j := range impls {
				i := (j + r) % len(impls)
				t := time.Now()
				must(impls[i].name+" "+sc.op, impls[i].run(sc, calls))
				us[i] = append(us[i], time.Since(t).Seconds()*1e6/float64(calls))
			}
		}
		for i, im := range impls {
			fmt.Printf("RESULT impl=%s op=%s value=%.3f unit=us/op\n", im.name, sc.op, median(us[i]))
		}
		for i, im := range impls[1:] {
			ratios := make([]float64, *solverSamples)
			for r := range ratios {
				ratios[r] = us[i+1][r] / us[0][r]
			}
			fmt.Printf("SOLVER op=%s impl=%s ref=c ratio=%.4f ratio_p25=%.4f ratio_p75=%.4f median=%.3f ref_median=%.3f unit=us/op samples=%d calls_per_sample=%d\n",
				sc.op, im.name, median(ratios), quantile(ratios, 0.25), quantile(ratios, 0.75), median(us[i+1]), median(us[0]), *solverSamples, calls)
		}
	}
}

func newSolverBench(maxN int, cases []solverCase) *solverBench {
	devs, err := cuda.Devices()
	if err == nil && len(devs) == 0 {
		err = errors.New("no CUDA device")
	}
	must("-impl solver needs a GPU: cuda.Devices", err)
	b := &solverBench{}
	b.ctx, err = cuda.PrimaryContext(devs[0])
	must("cuda.PrimaryContext", err)
	b.s, err = cuda.NewStream(b.ctx)
	must("cuda.NewStream", err)
	b.stream = b.s.Raw()
	runtime.LockOSThread()
	must("cuCtxPushCurrent", cu.CtxPushCurrent(b.ctx.Raw()))
	must("cuSOLVER", cusolver.Load())
	var h cusolver.CusolverDnHandle_t
	must("cusolverDnCreate", cusolver.DnCreate(&h))
	b.handle = h
	must("cusolverDnSetStream", cusolver.DnSetStream(h, b.stream))
	v, err := solver.Version()
	must("cusolverGetVersion", err)
	var name [256]byte
	must("cuDeviceGetName", cu.DeviceGetName(&name[0], int32(len(name)), devs[0].Raw()))
	fmt.Printf("INFO solver device=%q cusolver=%s cusolver_version=%d bindings_header=%d\n",
		strings.TrimRight(string(name[:]), "\x00"), cusolver.LibraryPath(), v, cusolver.HeaderVersion())

	// The random A0 of the largest order; a case of order n uses its
	// first n² elements as an n×n matrix (leading dimension n).
	r := rand.New(rand.NewPCG(3, 2026))
	gen := make([]float64, maxN*maxN)
	for i := range gen {
		gen[i] = 2*r.Float64() - 1
	}
	b.gen = gen
	b.general, err = cuda.AllocSliceFrom(b.ctx, gen)
	must("cuda.AllocSliceFrom", err)
	b.spd, err = cuda.AllocSlice[float64](b.ctx, maxN*maxN)
	must("cuda.AllocSlice", err)
	b.a, err = cuda.AllocSlice[float64](b.ctx, maxN*maxN)
	must("cuda.AllocSlice", err)
	b.w, err = cuda.AllocSlice[float64](b.ctx, maxN)
	must("cuda.AllocSlice", err)
	b.ipiv, err = cuda.AllocSlice[int32](b.ctx, maxN)
	must("cuda.AllocSlice", err)
	b.info, err = cuda.Alloc(b.ctx, 4)
	must("cuda.Alloc", err)
	lwork := int32(1)
	for _, sc := range cases {
		lwork = max(lwork, b.lwork(sc))
	}
	b.work, err = cuda.Alloc(b.ctx, int(lwork)*8)
	must("cuda.Alloc", err)
	b.workPool, err = cuda.AllocAsync(b.s, int(lwork)*8)
	must("cuda.AllocAsync", err)
	return b
}

func (b *solverBench) lwork(sc solverCase) int32 {
	var lw int32
	n := int32(sc.n)
	a := devPtr[float64](b.a.Ptr())
	switch sc.kind {
	case "getrf":
		must("cusolverDnDgetrf_bufferSize", cusolver.DnDgetrf_bufferSize(b.handle, n, n, a, n, &lw))
	case "potrf":
		must("cusolverDnDpotrf_bufferSize", cusolver.DnDpotrf_bufferSize(b.handle, cublas.CUBLAS_FILL_MODE_LOWER, n, a, n, &lw))
	case "syevd":
		must("cusolverDnDsyevd_bufferSize", cusolver.DnDsyevd_bufferSize(b.handle, cusolver.CUSOLVER_EIG_MODE_VECTOR, cublas.CUBLAS_FILL_MODE_LOWER, n, a, n, devPtr[float64](b.w.Ptr()), &lw))
	}
	return lw
}

var svKinds = map[string]C.int{"getrf": C.SV_GETRF, "potrf": C.SV_POTRF, "syevd": C.SV_SYEVD}

// cLoop: sv_loop, with the entry points the Go bindings resolved.
func (b *solverBench) cLoop() func(solverCase, int) error {
	proc := func(p func(string) (uintptr, error), name string) C.uintptr_t {
		f, err := p(name)
		must("Proc "+name, err)
		return C.uintptr_t(f)
	}
	fns := C.struct_sv_fns{
		copy: proc(cu.Proc, "cuMemcpyDtoDAsync"), sync: proc(cu.Proc, "cuStreamSynchronize"), dtoh: proc(cu.Proc, "cuMemcpyDtoH"),
		getrf_bs: proc(cusolver.Proc, "cusolverDnDgetrf_bufferSize"), getrf: proc(cusolver.Proc, "cusolverDnDgetrf"),
		potrf_bs: proc(cusolver.Proc, "cusolverDnDpotrf_bufferSize"), potrf: proc(cusolver.Proc, "cusolverDnDpotrf"),
		syevd_bs: proc(cusolver.Proc, "cusolverDnDsyevd_bufferSize"), syevd: proc(cusolver.Proc, "cusolverDnDsyevd"),
	}
	return func(sc solverCase, calls int) error {
		a0 := C.uintptr_t(b.a0Cached(sc))
		var code C.int
		switch C.sv_loop(fns, svKinds[sc.kind], C.uintptr_t(b.handle), C.uintptr_t(b.stream), C.int(sc.n), C.uintptr_t(b.a.Ptr()), a0,
			C.uintptr_t(b.work.Raw()), C.uintptr_t(b.ipiv.Ptr()), C.uintptr_t(b.w.Ptr()), C.uintptr_t(b.info.Raw()), C.int(calls), &code) {
		case 0:
			return nil
		case 1:
			return cu.CUresult(code)
		case 2:
			return cusolver.CusolverStatus_t(code)
		}
		return fmt.Errorf("info %d", int(code))
	}
}

// rawLoopOn is sv_loop's solves through the raw bindings, in the
// workspace ws.
func (b *solverBench) rawLoopOn(ws *cuda.DeviceMemory) func(sc solverCase, calls int) error {
	return func(sc solverCase, calls int) error { return b.rawLoop(sc, calls, ws) }
}

func (b *solverBench) rawLoop(sc solverCase, calls int, ws *cuda.DeviceMemory) error {
	n := int32(sc.n)
	a, work, w := devPtr[float64](b.a.Ptr()), devPtr[float64](ws.Raw()), devPtr[float64](b.w.Ptr())
	ipiv, dinfo := devPtr[int32](b.ipiv.Ptr()), devPtr[int32](b.info.Raw())
	a0 := b.a0Cached(sc)
	lower := cublas.CUBLAS_FILL_MODE_LOWER
	for range calls {
		if err := cu.MemcpyDtoDAsync(b.a.Ptr(), a0, uint64(sc.n*sc.n*8), b.stream); err != nil {
			return err
		}
		var lw int32
		var err error
		switch sc.kind {
		case "getrf":
			if err = cusolver.DnDgetrf_bufferSize(b.handle, n, n, a, n, &lw); err == nil {
				err = cusolver.DnDgetrf(b.handle, n, n, a, n, work, ipiv, dinfo)
			}
		case "potrf":
			if err = cusolver.DnDpotrf_bufferSize(b.handle, lower, n, a, n, &lw); err == nil {
				err = cusolver.DnDpotrf(b.handle, lower, n, a, n, work, lw, dinfo)
			}
		case "syevd":
			vec := cusolver.CUSOLVER_EIG_MODE_VECTOR
			if err = cusolver.DnDsyevd_bufferSize(b.handle, vec, lower, n, a, n, w, &lw); err == nil {
				err = cusolver.DnDsyevd(b.handle, vec, lower, n, a, n, w, work, lw, dinfo)
			}
		}
		if err != nil {
			return err
		}
		if err := cu.StreamSynchronize(b.stream); err != nil {
			return err
		}
		var info int32
		if err := cu.MemcpyDtoH(unsafe.Pointer(&info), b.info.Raw(), 4); err != nil {
			return err
		}
		if info != 0 {
			return fmt.Errorf("info %d", info)
		}
	}
	return nil
}

// a0Cached is the device address of sc's pristine matrix: the random one
// for getrf; for potrf and syevd, B + Bᵀ + 2n·I of the random B of order
// n, diagonally dominant and so symmetric positive definite, made when
// the order changes.
func (b *solverBench) a0Cached(sc solverCase) cu.CUdeviceptr {
	if sc.kind == "getrf" {
		return b.general.Ptr()
	}
	if n := sc.n; b.spdFor != n {
		host := make([]float64, n*n)
		for j := 0; j < n; j++ {
			for i := 0; i < n; i++ {
				v := b.gen[i+j*n] + b.gen[j+i*n]
				if i == j {
					v += 2 * float64(n)
				}
				host[i+j*n] = v
			}
		}
		must("Slice.CopyFromHost", b.spd.CopyFromHost(b.s, host))
		b.spdFor = n
	}
	return b.spd.Ptr()
}

// safeLoop is the same solves through cuda/solver, on a handle of its own
// bound to the stream; the restoring copy is the raw one of the others.
func (b *solverBench) safeLoop() func(solverCase, int) error {
	h, err := solver.New(b.s)
	must("solver.New", err)
	return func(sc solverCase, calls int) error {
		a0 := b.a0Cached(sc)
		a := solver.Matrix[float64]{Mem: b.a, Rows: sc.n, Cols: sc.n}
		for range calls {
			if err := cu.MemcpyDtoDAsync(b.a.Ptr(), a0, uint64(sc.n*sc.n*8), b.stream); err != nil {
				return err
			}
			var err error
			switch sc.kind {
			case "getrf":
				err = solver.Getrf(h, a, b.ipiv)
			case "potrf":
				err = solver.Potrf(h, solver.Lower, a)
			case "syevd":
				err = solver.Syevd(h, true, solver.Lower, a, b.w)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
}
