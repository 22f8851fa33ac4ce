//go:build linux && (amd64 || arm64)

package fakecusparse_test

// What package cuda/sparse's tests do not reach: the status codes of what
// cuda/sparse checks before cuSPARSE, memory outside the fake driver's
// allocations, one-based indices, the order of SpGEMM's columns, the
// version, and the race detector seeing the work.

import (
	"errors"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/cuda/sparse"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cusparse"
	"github.com/gocuda/gocuda/generated/libtypes"
	"github.com/gocuda/gocuda/internal/fakecusparse"
)

// TestMain runs on the fake driver with its race detector, through
// cudatest.Setup, which sets the fake cuSPARSE up as users get it.
func TestMain(m *testing.M) {
	os.Exit(cudatest.UseFakeDriver(m, cudatest.WithRaceDetector()))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// stream returns a stream of the primary context, made current on the
// test's goroutine, locked to its thread, for the raw calls.
func stream(t *testing.T) *cuda.Stream {
	t.Helper()
	if !fakecusparse.Active() {
		t.Fatalf("generated/cusparse loaded %q, not the fake cuSPARSE", cusparse.LibraryPath())
	}
	d, err := cuda.GetDevice(0)
	must(t, err)
	ctx, err := cuda.PrimaryContext(d)
	must(t, err)
	t.Cleanup(func() { ctx.Close() })
	s, err := cuda.NewStream(ctx)
	must(t, err)
	t.Cleanup(func() { s.Close() })
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	must(t, cu.CtxSetCurrent(ctx.Raw()))
	return s
}

func alloc[T cuda.Element](t *testing.T, s *cuda.Stream, v []T) *cuda.Slice[T] {
	t.Helper()
	d, err := cuda.AllocSliceFrom(s, v)
	must(t, err)
	t.Cleanup(func() { d.Close() })
	return d
}

func ptr(p cu.CUdeviceptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

func handle(t *testing.T, s *cuda.Stream) cusparse.CusparseHandle_t {
	t.Helper()
	var h cusparse.CusparseHandle_t
	must(t, cusparse.Create(&h))
	t.Cleanup(func() { cusparse.Destroy(h) })
	must(t, cusparse.SetStream(h, s.Raw()))
	return h
}

// csr makes the descriptor of a 2×2 CSR matrix of float32 at the given
// addresses.
func csr(t *testing.T, off, col, val unsafe.Pointer, base cusparse.CusparseIndexBase_t) cusparse.CusparseSpMatDescr_t {
	t.Helper()
	var m cusparse.CusparseSpMatDescr_t
	must(t, cusparse.CreateCsr(&m, 2, 2, 2, off, col, val, cusparse.CUSPARSE_INDEX_32I, cusparse.CUSPARSE_INDEX_32I, base, libtypes.CUDA_R_32F))
	t.Cleanup(func() { cusparse.DestroySpMat(spConst(m)) })
	return m
}

func vec(t *testing.T, n int64, p unsafe.Pointer, ty libtypes.CudaDataType) cusparse.CusparseDnVecDescr_t {
	t.Helper()
	var v cusparse.CusparseDnVecDescr_t
	must(t, cusparse.CreateDnVec(&v, n, p, ty))
	t.Cleanup(func() { cusparse.DestroyDnVec(vecConst(v)) })
	return v
}

// TestStatusCodes: what cuda/sparse refuses before calling, the fake
// refuses with cuSPARSE's statuses, and LastError says why.
func TestStatusCodes(t *testing.T) {
	s := stream(t)
	h := handle(t, s)
	off := alloc(t, s, []int32{0, 1, 2})
	col := alloc(t, s, []int32{0, 1})
	val := alloc(t, s, []float32{2, 3})
	x, y := alloc(t, s, []float32{1, 1}), alloc(t, s, []float32{0, 0})
	buf := alloc(t, s, make([]byte, 4096))
	A := csr(t, ptr(off.Ptr()), ptr(col.Ptr()), ptr(val.Ptr()), cusparse.CUSPARSE_INDEX_BASE_ZERO)
	X, Y := vec(t, 2, ptr(x.Ptr()), libtypes.CUDA_R_32F), vec(t, 2, ptr(y.Ptr()), libtypes.CUDA_R_32F)
	Y3 := vec(t, 3, ptr(y.Ptr()), libtypes.CUDA_R_32F)
	X64 := vec(t, 2, ptr(x.Ptr()), libtypes.CUDA_R_64F)
	outside := vec(t, 2, ptr(0x10), libtypes.CUDA_R_32F) // in no allocation
	one, zero := float32(1), float32(0)
	pa, pb := unsafe.Pointer(&one), unsafe.Pointer(&zero)
	n := cusparse.CUSPARSE_OPERATION_NON_TRANSPOSE
	alg := cusparse.CUSPARSE_SPMV_ALG_DEFAULT
	spmv := func(h cusparse.CusparseHandle_t, x, y cusparse.CusparseDnVecDescr_t, b unsafe.Pointer) error {
		return cusparse.SpMV(h, n, pa, spConst(A), vecConst(x), pb, y, libtypes.CUDA_R_32F, alg, b)
	}
	var spsv cusparse.CusparseSpSVDescr_t
	must(t, cusparse.SpSV_createDescr(&spsv))
	defer cusparse.SpSV_destroyDescr(spsv)
	var gemm cusparse.CusparseSpGEMMDescr_t
	must(t, cusparse.SpGEMM_createDescr(&gemm))
	defer cusparse.SpGEMM_destroyDescr(gemm)
	var size uint64 = 1 << 20
	for _, tc := range []struct {
		what string
		call func() error
		want cusparse.CusparseStatus_t
		msg  string
	}{
		{"no handle", func() error { return spmv(0, X, Y, ptr(buf.Ptr())) }, cusparse.CUSPARSE_STATUS_NOT_INITIALIZED, "not a live handle"},
		{"no buffer", func() error { return spmv(h, X, Y, nil) }, cusparse.CUSPARSE_STATUS_INVALID_VALUE, "no external buffer"},
		{"shapes", func() error { return spmv(h, X, Y3, ptr(buf.Ptr())) }, cusparse.CUSPARSE_STATUS_INVALID_VALUE, "do not multiply"},
		{"types", func() error { return spmv(h, X64, Y, ptr(buf.Ptr())) }, cusparse.CUSPARSE_STATUS_NOT_SUPPORTED, "one type throughout"},
		{"outside", func() error { return spmv(h, outside, Y, ptr(buf.Ptr())) }, cusparse.CUSPARSE_STATUS_INVALID_VALUE, "not in one allocation"},
		{"solve unanalyzed", func() error {
			return cusparse.SpSV_solve(h, n, pa, spConst(A), vecConst(X), Y, libtypes.CUDA_R_32F, cusparse.CUSPARSE_SPSV_ALG_DEFAULT, spsv)
		}, cusparse.CUSPARSE_STATUS_INVALID_VALUE, "has not been through the analysis"},
		{"compute first", func() error {
			return cusparse.SpGEMM_compute(h, n, n, pa, spConst(A), spConst(A), pb, A, libtypes.CUDA_R_32F, cusparse.CUSPARSE_SPGEMM_DEFAULT, gemm, &size, ptr(buf.Ptr()))
		}, cusparse.CUSPARSE_STATUS_INVALID_VALUE, "work estimation has not run"},
		{"transposed SpGEMM", func() error {
			return cusparse.SpGEMM_workEstimation(h, cusparse.CUSPARSE_OPERATION_TRANSPOSE, n, pa, spConst(A), spConst(A), pb, A, libtypes.CUDA_R_32F, cusparse.CUSPARSE_SPGEMM_DEFAULT, gemm, &size, nil)
		}, cusparse.CUSPARSE_STATUS_NOT_SUPPORTED, "only non-transposed"},
		{"destroyed vector", func() error { return cusparse.DestroyDnVec(vecConst(cusparse.CusparseDnVecDescr_t(0x1234))) }, cusparse.CUSPARSE_STATUS_INVALID_VALUE, "not a live dense vector"},
	} {
		// The message is the thread's: the call and LastError on one.
		err := tc.call()
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.what, err, tc.want)
		} else if msg := fakecusparse.LastError(); !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: LastError %q, want it to contain %q", tc.what, msg, tc.msg)
		}
	}
}

// TestOneBasedIndices: a matrix with index base one gives the product
// of the same matrix with base zero.
func TestOneBasedIndices(t *testing.T) {
	s := stream(t)
	h := handle(t, s)
	off := alloc(t, s, []int32{1, 2, 4}) // [[0 2] [3 4]]
	col := alloc(t, s, []int32{2, 1, 2})
	val := alloc(t, s, []float32{2, 3, 4})
	x, y := alloc(t, s, []float32{1, 10}), alloc(t, s, []float32{0, 0})
	buf := alloc(t, s, make([]byte, 4096))
	var A cusparse.CusparseSpMatDescr_t
	must(t, cusparse.CreateCsr(&A, 2, 2, 3, ptr(off.Ptr()), ptr(col.Ptr()), ptr(val.Ptr()), cusparse.CUSPARSE_INDEX_32I, cusparse.CUSPARSE_INDEX_32I, cusparse.CUSPARSE_INDEX_BASE_ONE, libtypes.CUDA_R_32F))
	defer cusparse.DestroySpMat(spConst(A))
	X, Y := vec(t, 2, ptr(x.Ptr()), libtypes.CUDA_R_32F), vec(t, 2, ptr(y.Ptr()), libtypes.CUDA_R_32F)
	one, zero := float32(1), float32(0)
	must(t, cusparse.SpMV(h, cusparse.CUSPARSE_OPERATION_NON_TRANSPOSE, unsafe.Pointer(&one), spConst(A), vecConst(X), unsafe.Pointer(&zero), Y, libtypes.CUDA_R_32F, cusparse.CUSPARSE_SPMV_ALG_DEFAULT, ptr(buf.Ptr())))
	must(t, s.Synchronize())
	got := make([]float32, 2)
	must(t, y.CopyTo(got))
	if !slices.Equal(got, []float32{20, 43}) {
		t.Fatalf("y = %v, want [20 43]", got)
	}
}

// TestSpGEMMColumnsAreSorted: each row of a product lists its columns in
// increasing order, whatever the order the products reach them in.
func TestSpGEMMColumnsAreSorted(t *testing.T) {
	s := stream(t)
	sh, err := sparse.New(s)
	must(t, err)
	defer sh.Close()
	// A = [[1 1]], B = [[0 0 1] [1 1 0]]: row 0 of A·B reaches column 2
	// first, then 0 and 1.
	A, err := sparse.NewCSR(1, 2, alloc(t, s, []int32{0, 2}), alloc(t, s, []int32{0, 1}), alloc(t, s, []float64{1, 1}))
	must(t, err)
	B, err := sparse.NewCSR(2, 3, alloc(t, s, []int32{0, 1, 3}), alloc(t, s, []int32{2, 0, 1}), alloc(t, s, []float64{5, 6, 7}))
	must(t, err)
	C, err := sparse.SpGEMM(sh, 1, A, B)
	must(t, err)
	defer C.Close()
	_, cols, vals := C.Arrays()
	must(t, s.Synchronize())
	gc, gv := make([]int32, cols.Len()), make([]float64, vals.Len())
	must(t, cols.CopyTo(gc))
	must(t, vals.CopyTo(gv))
	if !slices.Equal(gc, []int32{0, 1, 2}) || !slices.Equal(gv, []float64{6, 7, 5}) {
		t.Fatalf("columns %v, values %v; want [0 1 2] and [6 7 5]", gc, gv)
	}
}

// TestVersionIsTheEnvironments: cusparseGetVersion and
// cusparseGetProperty report FAKECUSPARSE_VERSION, which Setup set to
// the bindings' CUSPARSE_VERSION.
func TestVersionIsTheEnvironments(t *testing.T) {
	s := stream(t)
	h := handle(t, s)
	want, err := strconv.Atoi(os.Getenv(fakecusparse.VersionEnv))
	must(t, err)
	if want != cusparse.CUSPARSE_VERSION {
		t.Errorf("%s=%d, want the bindings' %d", fakecusparse.VersionEnv, want, cusparse.CUSPARSE_VERSION)
	}
	var v int32
	must(t, cusparse.GetVersion(h, &v))
	var major, minor, patch int32
	must(t, cusparse.GetProperty(libtypes.MAJOR_VERSION, &major))
	must(t, cusparse.GetProperty(libtypes.MINOR_VERSION, &minor))
	must(t, cusparse.GetProperty(libtypes.PATCH_LEVEL, &patch))
	if int(v) != want || int(major*1000+minor*100+patch) != want {
		t.Fatalf("version %d, properties %d.%d.%d; want %d", v, major, minor, patch, want)
	}
}

// TestRaceDetectorSeesTheWork: an SpMV writes y on one stream and a copy
// on another reads it with nothing between them, a race the detector
// reports between the fake's host function and the copy; with an event
// between them, none.
func TestRaceDetectorSeesTheWork(t *testing.T) {
	s := stream(t)
	s2, err := cuda.NewStream(s.Context())
	must(t, err)
	defer s2.Close()
	h, err := sparse.New(s)
	must(t, err)
	defer h.Close()
	const n = 64
	off := make([]int32, n+1)
	col := make([]int32, n)
	for i := range n {
		off[i+1] = int32(i + 1)
		col[i] = int32(i)
	}
	A, err := sparse.NewCSR(n, n, alloc(t, s, off), alloc(t, s, col), alloc(t, s, make([]float32, n)))
	must(t, err)
	x, y := alloc(t, s, make([]float32, n)), alloc(t, s, make([]float32, n))
	dst, err := cuda.AllocAsync(s2, n*4)
	must(t, err)
	defer dst.Close()
	must(t, s.Synchronize())
	must(t, s2.Synchronize())
	if r := cudatest.TakeRaces(); len(r) != 0 {
		t.Fatalf("races before the test: %v", r)
	}
	must(t, sparse.SpMV(h, sparse.NoTrans, 1, A, x, 0, y))
	must(t, cu.MemcpyDtoDAsync(dst.Ptr(), y.Ptr(), n*4, s2.Raw()))
	must(t, s.Synchronize())
	must(t, s2.Synchronize())
	found := false
	races := cudatest.TakeRaces()
	for _, r := range races {
		ops := map[string]bool{r.Access.Op: true, r.Previous.Op: true}
		if ops["host function"] && ops["copy"] && uint64(r.Access.Addr) >= uint64(y.Ptr()) && uint64(r.Access.Addr) < uint64(y.Ptr())+n*4 {
			found = true
		}
	}
	if !found {
		t.Fatalf("races %v: none between SpMV's host function and the copy of y", races)
	}
	ev, err := cuda.NewEvent(s.Context())
	must(t, err)
	defer ev.Close()
	must(t, sparse.SpMV(h, sparse.NoTrans, 1, A, x, 0, y))
	must(t, ev.Record(s))
	must(t, s2.WaitEvent(ev))
	must(t, cu.MemcpyDtoDAsync(dst.Ptr(), y.Ptr(), n*4, s2.Raw()))
	must(t, s.Synchronize())
	must(t, s2.Synchronize())
	if r := cudatest.TakeRaces(); len(r) != 0 {
		t.Fatalf("ordered by an event, races %v", r)
	}
}
