package main

/*
#include <stdint.h>

// The prototypes of cusparseSpMV and cusparseSpMM as the C ABI sees them:
// handles and descriptors are pointers, enums ints.
typedef int (*sp_spmv_t)(uintptr_t, int, const void *, uintptr_t, uintptr_t, const void *, uintptr_t, int, int, void *);
typedef int (*sp_spmm_t)(uintptr_t, int, int, const void *, uintptr_t, uintptr_t, const void *, uintptr_t, int, int, void *);

// sp_spmv_loop makes n calls of cusparseSpMV (fn) as a C program would,
// within one cgo call; alpha and beta live on its stack. It returns 0 or
// the first failing cusparseStatus_t.
static int sp_spmv_loop(uintptr_t fn, uintptr_t h, uintptr_t a, uintptr_t x, uintptr_t y, int type, uintptr_t buf, int n) {
	float alpha = 1, beta = 0;
	for (int i = 0; i < n; i++) {
		int r = ((sp_spmv_t)fn)(h, 0, &alpha, a, x, &beta, y, type, 0, (void *)buf);
		if (r) return r;
	}
	return 0;
}

static int sp_spmm_loop(uintptr_t fn, uintptr_t h, uintptr_t a, uintptr_t b, uintptr_t c, int type, uintptr_t buf, int n) {
	float alpha = 1, beta = 0;
	for (int i = 0; i < n; i++) {
		int r = ((sp_spmm_t)fn)(h, 0, 0, &alpha, a, b, &beta, c, type, 0, (void *)buf);
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
	"github.com/gocuda/gocuda/cuda/sparse"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cusparse"
	"github.com/gocuda/gocuda/generated/libtypes"
)

var (
	sparseRows    = flag.String("sparse-rows", "4096,1048576", "-impl sparse: the orders of the square float32 CSR matrices, comma-separated")
	sparsePerRow  = flag.Int("sparse-nnz-per-row", 16, "-impl sparse: entries per row, at random columns")
	sparseCols    = flag.Int("sparse-spmm-cols", 32, "-impl sparse: the columns of SpMM's dense B and C (column-major)")
	sparseSamples = flag.Int("sparse-samples", 15, "-impl sparse: timed samples per implementation and case")
	sparseMs      = flag.Float64("sparse-ms", 100, "-impl sparse: the GPU time one sample aims at, in ms (sets the calls per sample)")
)

// sparseBench is what every implementation of -impl sparse works on: the
// primary context of device 0, current on the benchmark's locked thread,
// a stream, the raw cuSPARSE handle and descriptors C and Go raw share,
// and the operands of one matrix order: A (n×n CSR, float32, int32
// indices), x and y (n), B (n×cols) and C (n×cols), column-major.
type sparseBench struct {
	ctx    *cuda.Context
	s      *cuda.Stream
	handle cusparse.CusparseHandle_t

	n, nnz           int
	off, col         *cuda.Slice[int32]
	val, x, y, bm, c *cuda.Slice[float32]
	hostOff, hostCol []int32
	hostVal, hostX   []float32
	hostB            []float32

	// The raw descriptors and workspaces of C and Go raw, made once.
	a          cusparse.CusparseSpMatDescr_t
	vx, vy     cusparse.CusparseDnVecDescr_t
	db, dc     cusparse.CusparseDnMatDescr_t
	wsMV, wsMM *cuda.DeviceMemory
	// The same from the stream's memory pool (cuMemAllocAsync), as
	// cuda/sparse's workspace is, for go-raw-poolws.
	poolMV, poolMM *cuda.DeviceMemory
	start, stop    cu.CUevent
	safe           *sparse.Handle
	A              *sparse.Matrix[float32, int32]
	B, C           *sparse.Dense[float32]
}

// sparseEnqueue puts calls of one operation ("spmv" or "spmm") on the
// stream and returns without waiting for them.
type sparseEnqueue func(op string, n int) error

type sparseImpl struct {
	name string
	make func(b *sparseBench) sparseEnqueue
}

// sparseImpls: the first is the reference the others are divided by.
var sparseImpls = []sparseImpl{
	{"c", sparseC},
	{"go-raw", sparseRaw},
	{"go-raw-poolws", sparseRawPool},
	{"go-cuda", sparseSafe},
}

// sparseC: a C loop (one cgo call per sample) calling the entry points
// generated/cusparse resolved, on the shared handle and descriptors.
func sparseC(b *sparseBench) sparseEnqueue {
	spmv, err := cusparse.Proc("cusparseSpMV")
	must("cusparse.Proc", err)
	spmm, err := cusparse.Proc("cusparseSpMM")
	must("cusparse.Proc", err)
	h := C.uintptr_t(b.handle)
	f32 := C.int(libtypes.CUDA_R_32F)
	return func(op string, n int) error {
		var r C.int
		if op == "spmv" {
			r = C.sp_spmv_loop(C.uintptr_t(spmv), h, C.uintptr_t(b.a), C.uintptr_t(b.vx), C.uintptr_t(b.vy), f32, C.uintptr_t(memRaw(b.wsMV)), C.int(n))
		} else {
			r = C.sp_spmm_loop(C.uintptr_t(spmm), h, C.uintptr_t(b.a), C.uintptr_t(b.db), C.uintptr_t(b.dc), f32, C.uintptr_t(memRaw(b.wsMM)), C.int(n))
		}
		if r != 0 {
			return cusparse.CusparseStatus_t(r)
		}
		return nil
	}
}

// sparseRaw: the raw bindings called in a Go loop, on the shared handle
// and descriptors.
func sparseRaw(b *sparseBench) sparseEnqueue { return sparseRawOn(b, b.wsMV, b.wsMM) }

// sparseRawPool: sparseRaw with workspaces from the memory pool.
func sparseRawPool(b *sparseBench) sparseEnqueue { return sparseRawOn(b, b.poolMV, b.poolMM) }

func sparseRawOn(b *sparseBench, wsMV, wsMM *cuda.DeviceMemory) sparseEnqueue {
	alpha, beta := float32(1), float32(0)
	pa, pb := unsafe.Pointer(&alpha), unsafe.Pointer(&beta)
	non := cusparse.CUSPARSE_OPERATION_NON_TRANSPOSE
	f32 := libtypes.CUDA_R_32F
	return func(op string, n int) error {
		for range n {
			var err error
			if op == "spmv" {
				err = cusparse.SpMV(b.handle, non, pa, benchConstSp(b.a), benchConstVec(b.vx), pb, b.vy, f32, cusparse.CUSPARSE_SPMV_ALG_DEFAULT, devUnsafe(memRaw(wsMV)))
			} else {
				err = cusparse.SpMM(b.handle, non, non, pa, benchConstSp(b.a), benchConstMat(b.db), pb, b.dc, f32, cusparse.CUSPARSE_SPMM_ALG_DEFAULT, devUnsafe(memRaw(wsMM)))
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// sparseSafe: package cuda/sparse on a handle of its own bound to the
// stream; it keeps the descriptors it makes and its workspace.
func sparseSafe(b *sparseBench) sparseEnqueue {
	return func(op string, n int) error {
		for range n {
			var err error
			if op == "spmv" {
				err = sparse.SpMV(b.safe, sparse.NoTrans, 1, b.A, b.x, 0, b.y)
			} else {
				err = sparse.SpMM(b.safe, sparse.NoTrans, 1, b.A, b.B, 0, b.C)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
}

func memRaw(m *cuda.DeviceMemory) cu.CUdeviceptr {
	if m == nil {
		return 0
	}
	return m.Raw()
}

// runSparse times SpMV and SpMM of each matrix order from each
// implementation in one process, as runGEMM does GEMMs: per case a
// warm-up and a check of each implementation's result against the CPU,
// then -sparse-samples rounds of one sample per implementation (n calls
// back to back, timed by CUDA events), the order rotating every round. It
// prints a RESULT line per implementation and case (the median GPU time
// per call, in ns/op, so that bench/report's table divides them), an INFO line with the host time per call, and a SPARSE line
// per implementation after the first: the median of its per-round time
// ratio to the first's.
func runSparse() {
	var orders []int
	for _, f := range strings.Split(*sparseRows, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > math.MaxInt32/max(1, *sparsePerRow) || *sparsePerRow < 1 || *sparsePerRow > n {
			must("-sparse-rows", fmt.Errorf("bad order %q for %d entries per row", f, *sparsePerRow))
		}
		orders = append(orders, n)
	}
	if *sparseSamples < 1 || *sparseMs <= 0 || *sparseCols < 1 {
		must("-sparse flags", errors.New("-sparse-samples, -sparse-ms and -sparse-spmm-cols must be positive"))
	}
	devs, err := cuda.Devices()
	if err == nil && len(devs) == 0 {
		err = errors.New("no CUDA device")
	}
	must("-impl sparse needs a GPU: cuda.Devices", err)
	ctx, err := cuda.PrimaryContext(devs[0])
	must("cuda.PrimaryContext", err)
	s, err := cuda.NewStream(ctx)
	must("cuda.NewStream", err)
	runtime.LockOSThread()
	must("cuCtxPushCurrent", cu.CtxPushCurrent(ctx.Raw()))
	var h cusparse.CusparseHandle_t
	must("cusparseCreate", cusparse.Create(&h))
	must("cusparseSetStream", cusparse.SetStream(h, s.Raw()))
	var version int32
	must("cusparseGetVersion", cusparse.GetVersion(h, &version))
	var name [256]byte
	must("cuDeviceGetName", cu.DeviceGetName(&name[0], int32(len(name)), devs[0].Raw()))
	fmt.Printf("INFO sparse device=%q cusparse=%s cusparse_version=%d bindings_header=%d\n",
		strings.TrimRight(string(name[:]), "\x00"), cusparse.LibraryPath(), version, cusparse.HeaderVersion())
	safe, err := sparse.New(s)
	must("sparse.New", err)
	defer safe.Close()
	var start, stop cu.CUevent
	must("cuEventCreate", cu.EventCreate(&start, uint32(cu.CU_EVENT_DEFAULT)))
	must("cuEventCreate", cu.EventCreate(&stop, uint32(cu.CU_EVENT_DEFAULT)))

	for _, n := range orders {
		b := newSparseBench(ctx, s, h, safe, n)
		b.start, b.stop = start, stop
		enq := make([]sparseEnqueue, len(sparseImpls))
		for i, im := range sparseImpls {
			enq[i] = im.make(b)
		}
		for _, op := range []string{"spmv", "spmm"} {
			caseName := fmt.Sprintf("%s_f32_n%d_nnz%d", op, n, b.nnz)
			if op == "spmm" {
				caseName += fmt.Sprintf("_cols%d", *sparseCols)
			}
			for i, im := range sparseImpls {
				must(im.name+" "+caseName+" warm-up", enq[i](op, 2))
				b.check(op, enq[i], im.name+" "+caseName)
			}
			host := make([]float64, len(sparseImpls))
			for i := range sparseImpls {
				host[i] = b.hostPerCall(enq[i], op)
			}
			const probe = 4
			ms := b.time(enq[0], op, probe)
			calls := max(3, min(200000, int(math.Ceil(*sparseMs*probe/ms))))
			us := make([][]float64, len(sparseImpls))
			for r := 0; r < *sparseSamples; r++ {
				for j := range sparseImpls {
					i := (j + r) % len(sparseImpls)
					us[i] = append(us[i], b.time(enq[i], op, calls)*1e3/float64(calls))
				}
			}
			for i, im := range sparseImpls {
				fmt.Printf("RESULT impl=%s op=%s value=%.1f unit=ns/op\n", im.name, caseName, median(us[i])*1e3)
			}
			for i, im := range sparseImpls {
				fmt.Printf("INFO sparse op=%s impl=%s host_us_per_call=%.2f gpu_us_per_call=%.2f\n", caseName, im.name, host[i]*1e6, median(us[i]))
			}
			for i, im := range sparseImpls[1:] {
				ratios := make([]float64, *sparseSamples)
				for r := range ratios {
					ratios[r] = us[i+1][r] / us[0][r]
				}
				fmt.Printf("SPARSE op=%s impl=%s ref=%s ratio=%.4f ratio_p25=%.4f ratio_p75=%.4f median=%.3f ref_median=%.3f unit=us samples=%d calls_per_sample=%d\n",
					caseName, im.name, sparseImpls[0].name, median(ratios), quantile(ratios, 0.25), quantile(ratios, 0.75),
					median(us[i+1]), median(us[0]), *sparseSamples, calls)
			}
		}
		b.close()
	}
}

// newSparseBench makes an n×n CSR matrix with -sparse-nnz-per-row
// entries per row at distinct random columns (values in [-1, 1)), x, y, B
// and C, the raw descriptors on them, and the workspaces cuSPARSE asks
// for.
func newSparseBench(ctx *cuda.Context, s *cuda.Stream, h cusparse.CusparseHandle_t, safe *sparse.Handle, n int) *sparseBench {
	b := &sparseBench{ctx: ctx, s: s, handle: h, safe: safe, n: n}
	r := rand.New(rand.NewPCG(uint64(n), 2026))
	per := *sparsePerRow
	b.hostOff = make([]int32, n+1)
	for i := range n {
		cols := map[int32]bool{}
		for len(cols) < per {
			cols[int32(r.IntN(n))] = true
		}
		row := make([]int32, 0, per)
		for c := range cols {
			row = append(row, c)
		}
		slices.Sort(row)
		b.hostCol = append(b.hostCol, row...)
		b.hostOff[i+1] = int32(len(b.hostCol))
	}
	b.nnz = len(b.hostCol)
	b.hostVal = make([]float32, b.nnz)
	for i := range b.hostVal {
		b.hostVal[i] = 2*r.Float32() - 1
	}
	b.hostX = make([]float32, n)
	for i := range b.hostX {
		b.hostX[i] = 2*r.Float32() - 1
	}
	k := *sparseCols
	b.hostB = make([]float32, n*k)
	for i := range b.hostB {
		b.hostB[i] = 2*r.Float32() - 1
	}
	var err error
	up := func(v []float32) *cuda.Slice[float32] {
		d, err := cuda.AllocSliceFrom(ctx, v)
		must("cuda.AllocSliceFrom", err)
		return d
	}
	b.off, err = cuda.AllocSliceFrom(ctx, b.hostOff)
	must("cuda.AllocSliceFrom", err)
	b.col, err = cuda.AllocSliceFrom(ctx, b.hostCol)
	must("cuda.AllocSliceFrom", err)
	b.val, b.x, b.y = up(b.hostVal), up(b.hostX), up(make([]float32, n))
	b.bm, b.c = up(b.hostB), up(make([]float32, n*k))

	i32, f32 := cusparse.CUSPARSE_INDEX_32I, libtypes.CUDA_R_32F
	var a cusparse.CusparseSpMatDescr_t
	must("cusparseCreateCsr", cusparse.CreateCsr(&a, int64(n), int64(n), int64(b.nnz), devUnsafe(b.off.Ptr()), devUnsafe(b.col.Ptr()), devUnsafe(b.val.Ptr()), i32, i32, cusparse.CUSPARSE_INDEX_BASE_ZERO, f32))
	var vx, vy cusparse.CusparseDnVecDescr_t
	must("cusparseCreateDnVec", cusparse.CreateDnVec(&vx, int64(n), devUnsafe(b.x.Ptr()), f32))
	must("cusparseCreateDnVec", cusparse.CreateDnVec(&vy, int64(n), devUnsafe(b.y.Ptr()), f32))
	var db, dc cusparse.CusparseDnMatDescr_t
	must("cusparseCreateDnMat", cusparse.CreateDnMat(&db, int64(n), int64(k), int64(n), devUnsafe(b.bm.Ptr()), f32, cusparse.CUSPARSE_ORDER_COL))
	must("cusparseCreateDnMat", cusparse.CreateDnMat(&dc, int64(n), int64(k), int64(n), devUnsafe(b.c.Ptr()), f32, cusparse.CUSPARSE_ORDER_COL))
	b.a, b.vx, b.vy, b.db, b.dc = a, vx, vy, db, dc
	alpha, beta := float32(1), float32(0)
	pa, pb := unsafe.Pointer(&alpha), unsafe.Pointer(&beta)
	non := cusparse.CUSPARSE_OPERATION_NON_TRANSPOSE
	var size uint64
	must("cusparseSpMV_bufferSize", cusparse.SpMV_bufferSize(h, non, pa, benchConstSp(a), benchConstVec(vx), pb, vy, f32, cusparse.CUSPARSE_SPMV_ALG_DEFAULT, &size))
	if size > 0 {
		b.wsMV, err = cuda.Alloc(ctx, int(size))
		must("cuda.Alloc", err)
		b.poolMV, err = cuda.AllocAsync(s, int(size))
		must("cuda.AllocAsync", err)
	}
	must("cusparseSpMM_bufferSize", cusparse.SpMM_bufferSize(h, non, non, pa, benchConstSp(a), benchConstMat(db), pb, dc, f32, cusparse.CUSPARSE_SPMM_ALG_DEFAULT, &size))
	if size > 0 {
		b.wsMM, err = cuda.Alloc(ctx, int(size))
		must("cuda.Alloc", err)
		b.poolMM, err = cuda.AllocAsync(s, int(size))
		must("cuda.AllocAsync", err)
	}
	b.A, err = sparse.NewCSR(n, n, b.off, b.col, b.val)
	must("sparse.NewCSR", err)
	b.B, err = sparse.NewDense(n, k, sparse.ColMajor, b.bm)
	must("sparse.NewDense", err)
	b.C, err = sparse.NewDense(n, k, sparse.ColMajor, b.c)
	must("sparse.NewDense", err)
	return b
}

func (b *sparseBench) close() {
	must("Stream.Synchronize", b.s.Synchronize())
	must("cusparseDestroySpMat", cusparse.DestroySpMat(benchConstSp(b.a)))
	must("cusparseDestroyDnVec", cusparse.DestroyDnVec(benchConstVec(b.vx)))
	must("cusparseDestroyDnVec", cusparse.DestroyDnVec(benchConstVec(b.vy)))
	must("cusparseDestroyDnMat", cusparse.DestroyDnMat(benchConstMat(b.db)))
	must("cusparseDestroyDnMat", cusparse.DestroyDnMat(benchConstMat(b.dc)))
	for _, m := range []*cuda.DeviceMemory{b.wsMV, b.wsMM, b.poolMV, b.poolMM} {
		if m != nil {
			must("DeviceMemory.Close", m.Close())
		}
	}
	for _, m := range []*cuda.Slice[float32]{b.val, b.x, b.y, b.bm, b.c} {
		must("Slice.Close", m.Close())
	}
	must("Slice.Close", b.off.Close())
	must("Slice.Close", b.col.Close())
}

// check fills the output with NaN, makes one call, and compares 16 rows
// (and for SpMM two columns of them) with a float64 product on the CPU,
// each within 1e-4 of the sum of its terms' magnitudes; a wrong result
// ends the program.
func (b *sparseBench) check(op string, enq sparseEnqueue, what string) {
	out := b.y
	if op == "spmm" {
		out = b.c
	}
	must("Fill", out.Fill(float32(math.NaN())))
	must(what, enq(op, 1))
	must("Stream.Synchronize", b.s.Synchronize())
	got := make([]float32, out.Len())
	must("CopyTo", out.CopyTo(got))
	r := rand.New(rand.NewPCG(uint64(b.n), 7))
	cols := []int{0}
	if op == "spmm" {
		cols = []int{0, *sparseCols - 1}
	}
	for p := range 16 {
		i := r.IntN(b.n)
		if p == 0 {
			i = 0
		}
		for _, j := range cols {
			var want, scale float64
			for e := b.hostOff[i]; e < b.hostOff[i+1]; e++ {
				var xv float64
				if op == "spmv" {
					xv = float64(b.hostX[b.hostCol[e]])
				} else {
					xv = float64(b.hostB[int(b.hostCol[e])+j*b.n])
				}
				t := float64(b.hostVal[e]) * xv
				want += t
				scale += math.Abs(t)
			}
			g := float64(got[i+j*b.n])
			if e := math.Abs(g - want); !(e <= 1e-4*scale+1e-30) {
				must(what+" result", fmt.Errorf("row %d column %d = %g, want %g", i, j, g, want))
			}
		}
	}
}

// hostPerCall is the host's time to enqueue one call, in seconds: the
// least of a few bursts of 8 calls on the idle stream.
func (b *sparseBench) hostPerCall(enq sparseEnqueue, op string) float64 {
	const burst, bursts = 8, 5
	best := math.Inf(1)
	for range bursts {
		must("Stream.Synchronize", b.s.Synchronize())
		t := time.Now()
		must(op, enq(op, burst))
		best = min(best, time.Since(t).Seconds()/burst)
	}
	must("Stream.Synchronize", b.s.Synchronize())
	return best
}

// time enqueues n calls between two events and returns the GPU time
// between them, in ms.
func (b *sparseBench) time(enq sparseEnqueue, op string, n int) float64 {
	stream := b.s.Raw()
	must("cuEventRecord", cu.EventRecord(b.start, stream))
	must(op, enq(op, n))
	must("cuEventRecord", cu.EventRecord(b.stop, stream))
	must("cuEventSynchronize", cu.EventSynchronize(b.stop))
	var ms float32
	must("cuEventElapsedTime", cu.EventElapsedTime(&ms, b.start, b.stop))
	if ms <= 0 {
		must("cuEventElapsedTime", fmt.Errorf("%g ms for %d calls", ms, n))
	}
	return float64(ms)
}
