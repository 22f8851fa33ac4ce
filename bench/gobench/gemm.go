package main

/*
#include <stdint.h>

// The prototypes of cublasSgemm_v2 and cublasGemmEx as the C ABI sees
// them: the handle is a pointer, the enums are ints.
typedef int (*gg_sgemm_t)(uintptr_t, int, int, int, int, int, const float *, const void *, int, const void *, int, const float *, void *, int);
typedef int (*gg_gemmex_t)(uintptr_t, int, int, int, int, int, const void *, const void *, int, int, const void *, int, int, const void *, void *, int, int, int, int);

// gg_sgemm_loop makes n calls of cublasSgemm_v2 (fn) as a C program
// would, within one cgo call; alpha and beta live on its stack. It returns
// 0 or the first failing cublasStatus_t.
static int gg_sgemm_loop(uintptr_t fn, uintptr_t h, int ta, int tb, int m, int nc, int k, float alpha,
		uintptr_t a, int lda, uintptr_t b, int ldb, float beta, uintptr_t c, int ldc, int n) {
	for (int i = 0; i < n; i++) {
		int r = ((gg_sgemm_t)fn)(h, ta, tb, m, nc, k, &alpha, (const void *)a, lda, (const void *)b, ldb, &beta, (void *)c, ldc);
		if (r) return r;
	}
	return 0;
}

// gg_gemmex_loop is the same for cublasGemmEx, with float alpha and beta
// (a compute type of 32-bit floats).
static int gg_gemmex_loop(uintptr_t fn, uintptr_t h, int ta, int tb, int m, int nc, int k, float alpha,
		uintptr_t a, int atype, int lda, uintptr_t b, int btype, int ldb, float beta, uintptr_t c, int ctype, int ldc,
		int compute, int algo, int n) {
	for (int i = 0; i < n; i++) {
		int r = ((gg_gemmex_t)fn)(h, ta, tb, m, nc, k, &alpha, (const void *)a, atype, lda, (const void *)b, btype, ldb,
			&beta, (void *)c, ctype, ldc, compute, algo);
		if (r) return r;
	}
	return 0;
}
*/
import "C"

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/cublaslt"
	"github.com/gocuda/gocuda/generated/libtypes"
)

var (
	gemmSizes   = flag.String("gemm-sizes", "4096,8192", "-impl gemm: the sizes M=N=K, comma-separated")
	gemmKinds   = flag.String("gemm-types", "f32,tf32,bf16,bf16lt,fp8", "-impl gemm: f32 (float32, TF32 off: CUBLAS_DEFAULT_MATH), tf32 (float32 with CUBLAS_TF32_TENSOR_OP_MATH), bf16 (cublasGemmEx, bfloat16 A, B and C, CUBLAS_COMPUTE_32F; cuda/blas through cuBLASLt), bf16lt (the same product through cublasLtMatmul everywhere), fp8 (cublasLtMatmul everywhere: E4M3 A and B, bfloat16 C, row-major C = A·Wᵀ, \"TN\" in cuBLASLt's terms)")
	gemmSamples = flag.Int("gemm-samples", 15, "-impl gemm: timed samples per implementation and case")
	gemmMs      = flag.Float64("gemm-ms", 200, "-impl gemm: the GPU time one sample aims at, in ms (sets the GEMMs per sample)")
)

// gemmCase is one GEMM the benchmark times: C = A·B, all three size×size,
// alpha 1 and beta 0; column-major, no transposes, except for fp8, whose
// C and A are row-major and B the transpose of a row-major W (see
// isLtKind).
type gemmCase struct {
	op   string // the RESULT lines' op: gemm_<kind>_<size>
	kind string // f32, tf32, bf16, bf16lt or fp8
	size int
}

func (gc gemmCase) flops() float64 { s := float64(gc.size); return 2 * s * s * s }

// gemmBench is what every implementation works on: the primary context of
// device 0, current on the benchmark's locked thread, a stream, the raw
// cuBLAS handle that C and Go raw share (bound to the stream, its math mode
// set per case) and the operands. A case of size n uses the first n²
// elements of each operand as an n×n matrix with leading dimension n.
type gemmBench struct {
	ctx    *cuda.Context
	s      *cuda.Stream
	stream cu.CUstream // s.Raw()
	handle cublas.CublasHandle_t

	a32, b32, c32 *cuda.DeviceMemory // float32, f32 and tf32
	a16, b16, c16 *cuda.DeviceMemory // bfloat16 (bits in uint16), bf16 and bf16lt; c16 is fp8's C too
	a8, b8        *cuda.DeviceMemory // E4M3 (fp8 only): A and W, both row-major

	// The host copies of A and B, for checking results on the CPU; fp8's
	// as the small integers they encode exactly.
	hostA32, hostB32 []float32
	hostA16, hostB16 []uint16
	hostA8, hostB8   []int8

	// The cuBLASLt handle and workspace C and Go raw share (gemmlt.go).
	lt   cublaslt.CublasLtHandle_t
	ltWS *cuda.DeviceMemory

	start, stop cu.CUevent // timing events, recorded on stream
}

// gemmEnqueue puts n GEMMs of case gc on the benchmark's stream and returns
// without waiting for them, or errGemmUnsupported if the implementation
// does not have the case's type.
type gemmEnqueue func(gc gemmCase, n int) error

// errGemmUnsupported, from an implementation's first call of a case (its
// warm-up), leaves it out of that case.
var errGemmUnsupported = errors.New("GEMM type not supported by this implementation")

// gemmImpl is one implementation that -impl gemm times. open runs once,
// before the first case, on the benchmark's thread with the context
// current; it returns the function that enqueues the GEMMs on b.s (into
// c32 from a32 and b32 for f32 and tf32, into c16 from a16 and b16 for
// bf16 and bf16lt, into c16 from a8 and b8 for fp8) and a function that
// releases what open made.
//
// The implementations that share b.handle find its math mode already set
// for the case (gemmMathMode). One with a library handle of its own makes
// it in open, bound to b.s, and sets TF32 on it when a call brings a case
// other than the previous call's: the first call of each case is the
// untimed warm-up.
type gemmImpl struct {
	name string // impl= of its RESULT lines
	open func(b *gemmBench) (gemmEnqueue, func() error, error)
}

// gemmImpls are the implementations -impl gemm compares, sample by sample
// in a rotating order; the first is the reference whose throughput the
// others are divided by, per pair of samples; a case it does not have
// (fp8 on a GPU without FP8) is left out.
//
// gemmblas.go adds the safe layer, cuda/blas, as "go-cuda".
var gemmImpls = []gemmImpl{
	{"c", openGemmC},
	{"go-raw", openGemmRaw},
}

// gemmMathMode is the cuBLAS math mode of a case on the shared handle.
func gemmMathMode(gc gemmCase) cublas.CublasMath_t {
	if gc.kind == "tf32" {
		return cublas.CUBLAS_TF32_TENSOR_OP_MATH
	}
	return cublas.CUBLAS_DEFAULT_MATH
}

// openGemmRaw: the raw bindings of generated/cublas called in a Go loop;
// bf16lt and fp8 through generated/cublaslt (openGemmRawLt).
func openGemmRaw(b *gemmBench) (gemmEnqueue, func() error, error) {
	lt, closeLt, err := openGemmRawLt(b)
	if err != nil {
		return nil, nil, err
	}
	alpha, beta := float32(1), float32(0)
	h := b.handle
	a32, b32, c32 := devPtr[float32](b.a32.Raw()), devPtr[float32](b.b32.Raw()), devPtr[float32](b.c32.Raw())
	a16, b16, c16 := devUnsafe(b.a16.Raw()), devUnsafe(b.b16.Raw()), devUnsafe(b.c16.Raw())
	bf16 := libtypes.CUDA_R_16BF
	opN := cublas.CUBLAS_OP_N
	enqueue := func(gc gemmCase, n int) error {
		s := int32(gc.size)
		if isLtKind(gc.kind) {
			return lt(gc, n)
		}
		switch gc.kind {
		case "f32", "tf32":
			for i := 0; i < n; i++ {
				if err := cublas.Sgemm(h, opN, opN, s, s, s, &alpha, a32, s, b32, s, &beta, c32, s); err != nil {
					return err
				}
			}
		case "bf16":
			for i := 0; i < n; i++ {
				if err := cublas.GemmEx(h, opN, opN, s, s, s, unsafe.Pointer(&alpha), a16, bf16, s, b16, bf16, s,
					unsafe.Pointer(&beta), c16, bf16, s, cublas.CUBLAS_COMPUTE_32F, cublas.CUBLAS_GEMM_DEFAULT); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("unknown GEMM type %q", gc.kind)
		}
		return nil
	}
	return enqueue, func() error { closeLt(); return nil }, nil
}

// openGemmC: a C loop (one cgo call per sample) calling the entry points
// generated/cublas resolved, so the same library and the same handle.
// Proc takes the header's name: "cublasSgemm" is the symbol
// cublasSgemm_v2, which cublas.Sgemm calls. bf16lt and fp8: cuBLASLt's
// entry points, descriptors made in C (openGemmCLt).
func openGemmC(b *gemmBench) (gemmEnqueue, func() error, error) {
	sgemm, err := cublas.Proc("cublasSgemm")
	if err != nil {
		return nil, nil, err
	}
	gemmEx, err := cublas.Proc("cublasGemmEx")
	if err != nil {
		return nil, nil, err
	}
	h := C.uintptr_t(b.handle)
	opN := C.int(cublas.CUBLAS_OP_N)
	a32, b32, c32 := C.uintptr_t(b.a32.Raw()), C.uintptr_t(b.b32.Raw()), C.uintptr_t(b.c32.Raw())
	a16, b16, c16 := C.uintptr_t(b.a16.Raw()), C.uintptr_t(b.b16.Raw()), C.uintptr_t(b.c16.Raw())
	bf16 := C.int(libtypes.CUDA_R_16BF)
	lt, closeLt, err := openGemmCLt(b)
	if err != nil {
		return nil, nil, err
	}
	enqueue := func(gc gemmCase, n int) error {
		if isLtKind(gc.kind) {
			return lt(gc, n)
		}
		s := C.int(gc.size)
		var r C.int
		switch gc.kind {
		case "f32", "tf32":
			r = C.gg_sgemm_loop(C.uintptr_t(sgemm), h, opN, opN, s, s, s, 1, a32, s, b32, s, 0, c32, s, C.int(n))
		case "bf16":
			r = C.gg_gemmex_loop(C.uintptr_t(gemmEx), h, opN, opN, s, s, s, 1, a16, bf16, s, b16, bf16, s, 0, c16, bf16, s,
				C.int(cublas.CUBLAS_COMPUTE_32F), C.int(cublas.CUBLAS_GEMM_DEFAULT), C.int(n))
		default:
			return fmt.Errorf("unknown GEMM type %q", gc.kind)
		}
		if r != 0 {
			return cublas.CublasStatus_t(r)
		}
		return nil
	}
	return enqueue, func() error { closeLt(); return nil }, nil
}

// gemmCases parses -gemm-sizes and -gemm-types.
func gemmCases() ([]gemmCase, int, error) {
	pairs, maxSize, err := sizeKinds("-gemm-sizes", *gemmSizes, "-gemm-types", *gemmKinds, "type", "f32", "tf32", "bf16", "bf16lt", "fp8")
	if err != nil {
		return nil, 0, err
	}
	var cases []gemmCase
	for _, p := range pairs {
		cases = append(cases, gemmCase{op: fmt.Sprintf("gemm_%s_%d", p.kind, p.size), kind: p.kind, size: p.size})
	}
	if *gemmSamples < 1 || *gemmMs <= 0 {
		return nil, 0, errors.New("-gemm-samples and -gemm-ms must be positive")
	}
	return cases, maxSize, nil
}

// sizeKind is one case of a benchmark of square problems: a kind of
// operation or element type, and a size.
type sizeKind struct {
	kind string
	size int
}

// sizeKinds parses a list of sizes and a list of kinds (the values of the
// flags sizesFlag and kindsFlag) into every pair, sizes outermost, and
// returns the largest size too. A size is at most 46340, so that its
// square fits an int32 element count; a kind must be one of known, and
// noun says what a kind is in errors ("type").
func sizeKinds(sizesFlag, sizes, kindsFlag, kinds, noun string, known ...string) ([]sizeKind, int, error) {
	var pairs []sizeKind
	maxSize := 0
	for _, f := range strings.Split(sizes, ",") {
		size, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || size < 1 || size > 46340 {
			return nil, 0, fmt.Errorf("%s: bad size %q", sizesFlag, f)
		}
		maxSize = max(maxSize, size)
		for _, kind := range strings.Split(kinds, ",") {
			kind = strings.TrimSpace(kind)
			if !slices.Contains(known, kind) {
				return nil, 0, fmt.Errorf("%s: unknown %s %q (%s)", kindsFlag, noun, kind, strings.Join(known, ", "))
			}
			pairs = append(pairs, sizeKind{kind, size})
		}
	}
	return pairs, maxSize, nil
}

// runGEMM times the GEMMs of every case from each implementation of
// gemmImpls in one process: per case, after a warm-up and a check of each
// implementation's result against the CPU, -gemm-samples rounds of one
// sample per implementation (n GEMMs back to back on the stream, timed by
// CUDA events, n chosen so that a sample takes about -gemm-ms), the order
// rotating every round so that drift (clocks, temperature) hits them alike.
// It prints a RESULT line per implementation and case (the median TFLOP/s),
// a GEMM line per implementation after the first: the median of its
// per-round throughput ratio to the first, and an INFO line per
// implementation with its host time per GEMM (hostPerGemm).
func runGEMM() {
	cases, maxSize, err := gemmCases()
	must("gemm flags", err)
	fp8 := false
	for _, gc := range cases {
		fp8 = fp8 || gc.kind == "fp8"
	}
	b := newGemmBench(maxSize, fp8)
	enqueues := make([]gemmEnqueue, len(gemmImpls))
	for i, im := range gemmImpls {
		enq, closeImpl, err := im.open(b)
		must("open "+im.name, err)
		defer func() { must("close "+im.name, closeImpl()) }()
		enqueues[i] = enq
	}
	for _, gc := range cases {
		must("cublasSetMathMode", cublas.SetMathMode(b.handle, gemmMathMode(gc)))
		// Warm up (cuBLAS picks and loads its kernels) and check that each
		// implementation computes the product, into a C set to NaN first.
		var active []int // the indexes in gemmImpls of those that have the case
		var ref []float64
		for i, im := range gemmImpls {
			err := enqueues[i](gc, 2)
			if errors.Is(err, errGemmUnsupported) {
				fmt.Printf("INFO gemm op=%s impl=%s: not supported, left out: %v\n", gc.op, im.name, err)
				if i == 0 {
					break // no reference: the case is left out
				}
				continue
			}
			must(im.name+" "+gc.op+" warm-up", err)
			active = append(active, i)
			got := b.checkedProduct(gc, enqueues[i], im.name)
			if ref == nil {
				ref = got
			} else if !equalBits(got, ref) {
				fmt.Printf("INFO gemm op=%s impl=%s: the checked elements differ from %s's (both within the tolerance)\n", gc.op, im.name, gemmImpls[0].name)
			}
		}
		if len(active) == 0 || active[0] != 0 {
			continue
		}
		host := make([]float64, len(gemmImpls))
		for _, i := range active {
			host[i] = b.hostPerGemm(enqueues[i], gc)
		}
		// n: GEMMs per sample, from a probe of the reference.
		const probe = 4
		ms := b.time(enqueues[0], gc, probe)
		n := max(3, min(100000, int(math.Ceil(*gemmMs*probe/ms))))

		tflops := make([][]float64, len(gemmImpls))
		for r := 0; r < *gemmSamples; r++ {
			for j := range active {
				i := active[(j+r)%len(active)]
				ms := b.time(enqueues[i], gc, n)
				tflops[i] = append(tflops[i], gc.flops()*float64(n)/(ms*1e-3)/1e12)
			}
		}
		for _, i := range active {
			fmt.Printf("RESULT impl=%s op=%s value=%.3f unit=TFLOP/s\n", gemmImpls[i].name, gc.op, median(tflops[i]))
		}
		for _, i := range active {
			fmt.Printf("INFO gemm op=%s impl=%s host_us_per_gemm=%.2f gpu_us_per_gemm=%.1f\n",
				gc.op, gemmImpls[i].name, host[i]*1e6, gc.flops()/(median(tflops[i])*1e12)*1e6)
		}
		for _, i := range active[1:] {
			ratios := make([]float64, *gemmSamples)
			for r := range ratios {
				ratios[r] = tflops[i][r] / tflops[0][r]
			}
			fmt.Printf("GEMM op=%s impl=%s ref=%s ratio=%.4f ratio_p25=%.4f ratio_p75=%.4f median=%.3f ref_median=%.3f min=%.3f max=%.3f unit=TFLOP/s samples=%d gemms_per_sample=%d\n",
				gc.op, gemmImpls[i].name, gemmImpls[0].name, median(ratios), quantile(ratios, 0.25), quantile(ratios, 0.75),
				median(tflops[i]), median(tflops[0]), quantile(tflops[i], 0), quantile(tflops[i], 1), *gemmSamples, n)
		}
	}
}

// hostPerGemm is the host's time to enqueue one GEMM of gc with enq, in
// seconds: the least of a few bursts of hostBurst GEMMs on the idle stream
// (few enough that the launch queue never fills and blocks the host), each
// timed on the CPU from the call to its return, the stream synchronized
// between bursts. The GPU's time per GEMM bounds what a loop of them can
// do; host work per GEMM below it hides behind the GPU's.
func (b *gemmBench) hostPerGemm(enq gemmEnqueue, gc gemmCase) float64 {
	const hostBurst, bursts = 8, 3
	best := math.Inf(1)
	for range bursts {
		must("Stream.Synchronize", b.s.Synchronize())
		t := time.Now()
		must(gc.op, enq(gc, hostBurst))
		best = min(best, time.Since(t).Seconds()/hostBurst)
	}
	must("Stream.Synchronize", b.s.Synchronize())
	return best
}

// time enqueues n GEMMs of gc between two events on the stream and returns
// the GPU time between the events, in ms.
func (b *gemmBench) time(enq gemmEnqueue, gc gemmCase, n int) float64 {
	must("cuEventRecord", cu.EventRecord(b.start, b.stream))
	must(gc.op, enq(gc, n))
	must("cuEventRecord", cu.EventRecord(b.stop, b.stream))
	must("cuEventSynchronize", cu.EventSynchronize(b.stop))
	var ms float32
	must("cuEventElapsedTime", cu.EventElapsedTime(&ms, b.start, b.stop))
	if ms <= 0 {
		must("cuEventElapsedTime", fmt.Errorf("%g ms for %d GEMMs", ms, n))
	}
	return float64(ms)
}

// newGemmBench makes the context, stream, events, cuBLAS handle, the
// cuBLASLt handle and workspace, and operands (uniform in [-1, 1), the
// bfloat16 ones rounded from the same numbers; with fp8, E4M3 ones that are
// integers in [-8, 8]), maxSize² elements each. The thread stays locked
// with the context current: the raw layer binds no context itself.
func newGemmBench(maxSize int, fp8 bool) *gemmBench {
	devs, err := cuda.Devices()
	if err == nil && len(devs) == 0 {
		err = errors.New("no CUDA device")
	}
	must("-impl gemm needs a GPU: cuda.Devices", err)
	b := &gemmBench{}
	b.ctx, err = cuda.PrimaryContext(devs[0])
	must("cuda.PrimaryContext", err)
	b.s, err = cuda.NewStream(b.ctx)
	must("cuda.NewStream", err)
	b.stream = b.s.Raw()
	runtime.LockOSThread()
	must("cuCtxPushCurrent", cu.CtxPushCurrent(b.ctx.Raw()))
	// Out-parameters are locals: a pointer into b would hand cgo a Go
	// object that holds Go pointers.
	var start, stop cu.CUevent
	must("cuEventCreate", cu.EventCreate(&start, uint32(cu.CU_EVENT_DEFAULT)))
	must("cuEventCreate", cu.EventCreate(&stop, uint32(cu.CU_EVENT_DEFAULT)))
	b.start, b.stop = start, stop

	if err := cublas.Load(); err != nil {
		must("cuBLAS", err)
	}
	var h cublas.CublasHandle_t
	must("cublasCreate", cublas.Create(&h))
	b.handle = h
	must("cublasSetStream", cublas.SetStream(b.handle, b.stream))
	var version int32
	must("cublasGetVersion", cublas.GetVersion(b.handle, &version))
	var name [256]byte
	must("cuDeviceGetName", cu.DeviceGetName(&name[0], int32(len(name)), devs[0].Raw()))
	fmt.Printf("INFO gemm device=%q cublas=%s cublas_version=%d bindings_header=%d\n",
		strings.TrimRight(string(name[:]), "\x00"), cublas.LibraryPath(), version, cublas.HeaderVersion())

	elems := maxSize * maxSize
	r := rand.New(rand.NewPCG(11, 2026))
	upload := func(x []float32) (*cuda.DeviceMemory, *cuda.DeviceMemory, []uint16) {
		for i := range x {
			x[i] = 2*r.Float32() - 1
		}
		x16 := make([]uint16, len(x))
		for i, v := range x {
			x16[i] = toBF16(v)
		}
		d32, err := cuda.AllocFrom(b.ctx, x)
		must("cuda.AllocFrom", err)
		d16, err := cuda.AllocFrom(b.ctx, x16)
		must("cuda.AllocFrom", err)
		return d32, d16, x16
	}
	b.hostA32, b.hostB32 = make([]float32, elems), make([]float32, elems)
	b.a32, b.a16, b.hostA16 = upload(b.hostA32)
	b.b32, b.b16, b.hostB16 = upload(b.hostB32)
	b.c32, err = cuda.Alloc(b.ctx, elems*4)
	must("cuda.Alloc", err)
	b.c16, err = cuda.Alloc(b.ctx, elems*2)
	must("cuda.Alloc", err)
	if fp8 {
		upload8 := func() (*cuda.DeviceMemory, []int8) {
			v := make([]int8, elems)
			enc := make([]uint8, elems)
			for i := range v {
				v[i] = int8(r.IntN(17) - 8)
				enc[i] = e4m3(v[i])
			}
			d, err := cuda.AllocFrom(b.ctx, enc)
			must("cuda.AllocFrom", err)
			return d, v
		}
		b.a8, b.hostA8 = upload8()
		b.b8, b.hostB8 = upload8()
	}
	b.newLtShared()
	return b
}

// e4m3 encodes an integer in [-15, 15], exactly, as FP8 E4M3 (sign, 4
// exponent bits biased by 7, 3 mantissa bits), as cuda/blas's tests do.
func e4m3(v int8) uint8 {
	if v == 0 {
		return 0
	}
	bits := math.Float32bits(float32(v))
	sign := uint8(bits>>31) << 7
	exp := int(bits>>23&0xff) - 127 + 7
	man := uint8(bits >> 20 & 7)
	return sign | uint8(exp)<<3 | man
}

// toBF16 rounds v to the nearest bfloat16 (ties to even); v is finite.
func toBF16(v float32) uint16 {
	u := math.Float32bits(v)
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

func fromBF16(h uint16) float64 { return float64(math.Float32frombits(uint32(h) << 16)) }

// checkedProduct sets C to NaN, makes one GEMM of gc with enq, and
// compares a few elements of C (corners and pseudo-random ones) with a
// float64 product of the same inputs on the CPU: each within a tolerance
// of the sum of its terms' magnitudes (float32: 1e-4; TF32: 5e-3; bfloat16
// output, bf16, bf16lt and fp8: 1e-2; fp8's products of small integers are
// exact up to the rounding of C to bfloat16). It returns the elements it
// checked; a wrong product ends the program.
func (b *gemmBench) checkedProduct(gc gemmCase, enq gemmEnqueue, impl string) []float64 {
	s := gc.size
	var tol float64
	var cPtr cu.CUdeviceptr
	switch gc.kind {
	case "f32", "tf32":
		must("MemsetD32Async", b.c32.MemsetD32Async(b.s, 0x7fc00000))
		tol, cPtr = 1e-4, b.c32.Raw()
		if gc.kind == "tf32" {
			tol = 5e-3
		}
	case "bf16", "bf16lt", "fp8":
		must("MemsetD16Async", b.c16.MemsetD16Async(b.s, 0x7fc0))
		tol, cPtr = 1e-2, b.c16.Raw()
	}
	must(impl+" "+gc.op, enq(gc, 1))
	must("Stream.Synchronize", b.s.Synchronize())

	r := rand.New(rand.NewPCG(uint64(s), 7))
	points := [][2]int{{0, 0}, {s - 1, s - 1}, {s - 1, 0}, {0, s - 1}}
	for len(points) < 16 {
		points = append(points, [2]int{r.IntN(s), r.IntN(s)})
	}
	got := make([]float64, len(points))
	for p, ij := range points {
		i, j := ij[0], ij[1]
		var want, scale float64
		for k := 0; k < s; k++ {
			var x, y float64
			switch gc.kind {
			case "bf16", "bf16lt":
				x, y = fromBF16(b.hostA16[i+k*s]), fromBF16(b.hostB16[k+j*s])
			case "fp8":
				// Row-major A and W, B = Wᵀ: B[k][j] = W[j][k].
				x, y = float64(b.hostA8[i*s+k]), float64(b.hostB8[j*s+k])
			default:
				x, y = float64(b.hostA32[i+k*s]), float64(b.hostB32[k+j*s])
			}
			want += x * y
			scale += math.Abs(x * y)
		}
		at := uint64(i + j*s)
		if gc.kind == "fp8" {
			at = uint64(i*s + j) // row-major C
		}
		if gc.kind != "f32" && gc.kind != "tf32" {
			var h uint16
			must("cuMemcpyDtoH", cu.MemcpyDtoH(unsafe.Pointer(&h), cPtr+cu.CUdeviceptr(2*at), 2))
			got[p] = fromBF16(h)
		} else {
			var f float32
			must("cuMemcpyDtoH", cu.MemcpyDtoH(unsafe.Pointer(&f), cPtr+cu.CUdeviceptr(4*at), 4))
			got[p] = float64(f)
		}
		if e := math.Abs(got[p] - want); !(e <= tol*scale) {
			must(impl+" "+gc.op+" result", fmt.Errorf("element C[%d,%d] = %g, want %g (error %.3g of the terms' magnitude %.3g, tolerance %g, size %d)",
				i, j, got[p], want, e/scale, scale, tol, s))
		}
	}
	return got
}

func equalBits(x, y []float64) bool {
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
			return false
		}
	}
	return len(x) == len(y)
}

// devPtr is device address d as the typed pointer the library bindings
// take for device memory; the bits are reinterpreted rather than converted
// from an integer so that vet's unsafeptr check has nothing to flag (the
// address is not Go memory: cgo's checks and the collector ignore it).
func devPtr[T any](d cu.CUdeviceptr) *T {
	return (*T)(*(*unsafe.Pointer)(unsafe.Pointer(&d)))
}

// devUnsafe is d as an unsafe.Pointer, for the bindings that take void*.
func devUnsafe(d cu.CUdeviceptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&d))
}
