//go:build linux && (amd64 || arm64)

package blas_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/blas"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/generated/cublas"
)

// needHandle returns a cuBLAS handle on a new stream, skipping where there
// is no GPU or no cuBLAS (unless GOCUDA_TEST_LIBS=required).
func needHandle(t *testing.T) (*cuda.Context, *cuda.Stream, *blas.Handle) {
	t.Helper()
	ctx := libtest.Context(t)
	s, err := cuda.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h, err := blas.New(s)
	if errors.Is(err, cublas.ErrNoLibrary) && !libtest.Required() {
		t.Skipf("no cuBLAS library: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return ctx, s, h
}

func TestGemmRejectsShapesThatDoNotMultiply(t *testing.T) {
	ctx := libtest.Context(t)
	mem := func(n int) *cuda.DeviceMemory { return libtest.Alloc(t, ctx, 4*n) }
	a := blas.Matrix{Mem: mem(6), Rows: 2, Cols: 3}
	b := blas.Matrix{Mem: mem(12), Rows: 3, Cols: 4}
	c := blas.Matrix{Mem: mem(8), Rows: 2, Cols: 4}
	for name, tc := range map[string]struct {
		a, b, c blas.Matrix
		want    string
	}{
		"inner":        {a, a, c, "A is 2×3 and B is 2×3"},
		"result":       {a, b, b, "A·B is 2×4 but C is 3×4"},
		"transposed":   {a.T(), b, c, "A is 3×2 and B is 3×4"},
		"small memory": {a, blas.Matrix{Mem: mem(11), Rows: 3, Cols: 4}, c, "48 bytes of 4-byte elements, but its memory has 44"},
		"stride":       {blas.Matrix{Mem: mem(6), Rows: 2, Cols: 3, Stride: 2}, b, c, "stride is shorter than a row"},
		"padded":       {blas.Matrix{Mem: mem(6), Rows: 2, Cols: 3, Stride: 4}, b, c, "28 bytes of 4-byte elements, but its memory has 24"},
		"negative":     {blas.Matrix{Mem: mem(6), Rows: -2, Cols: 3}, b, c, "negative"},
		"alias":        {a, b, blas.Matrix{Mem: b.Mem, Rows: 2, Cols: 4}, "shares its memory"},
		"layout":       {blas.Matrix{Mem: mem(6), Rows: 2, Cols: 3, Layout: 7}, b, c, "unknown layout"},
	} {
		err := blas.Gemm[float32](nil, 1, tc.a, tc.b, 0, tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Gemm = %v, want an error containing %q", name, err, tc.want)
		}
	}
	// Well-formed shapes on a nil handle: ErrClosed.
	if err := blas.Gemm[float32](nil, 1, a, b, 0, c); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Gemm on a nil handle = %v, want ErrClosed", err)
	}
	closed := libtest.Alloc(t, ctx, 4*6)
	closed.Close()
	if err := blas.Gemm[float32](nil, 1, blas.Matrix{Mem: closed, Rows: 2, Cols: 3}, b, 0, c); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Gemm with closed memory = %v, want ErrClosed", err)
	}
}

// gemmCase is one product checked against the CPU.
type gemmCase struct {
	m, k, n       int
	la, lb, lc    blas.Layout
	transA, padBy int
}

func (g gemmCase) String() string {
	return fmt.Sprintf("%dx%dx%d A:%v(T=%v) B:%v C:%v pad %d", g.m, g.k, g.n, g.la, g.transA == 1, g.lb, g.lc, g.padBy)
}

// layOut places the r×c matrix v (row-major, packed) in a buffer as x
// describes it.
func layOut[T float32 | float64](x blas.Matrix, v []T) []T {
	outer := x.Rows
	stride := x.Stride
	if stride == 0 {
		stride = x.Cols
		if x.Layout == blas.ColMajor {
			stride = x.Rows
		}
	}
	if x.Layout == blas.ColMajor {
		outer = x.Cols
	}
	buf := make([]T, outer*stride)
	for i := range x.Rows {
		for j := range x.Cols {
			if x.Layout == blas.RowMajor {
				buf[i*stride+j] = v[i*x.Cols+j]
			} else {
				buf[j*stride+i] = v[i*x.Cols+j]
			}
		}
	}
	return buf
}

func readBack[T float32 | float64](x blas.Matrix, buf []T) []T {
	stride := x.Stride
	if stride == 0 {
		stride = x.Cols
		if x.Layout == blas.ColMajor {
			stride = x.Rows
		}
	}
	v := make([]T, x.Rows*x.Cols)
	for i := range x.Rows {
		for j := range x.Cols {
			if x.Layout == blas.RowMajor {
				v[i*x.Cols+j] = buf[i*stride+j]
			} else {
				v[i*x.Cols+j] = buf[j*stride+i]
			}
		}
	}
	return v
}

func checkGemm[T float32 | float64](t *testing.T, ctx *cuda.Context, s *cuda.Stream, h *blas.Handle, g gemmCase, tol float64) {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(g.m), uint64(g.n*7+g.k)))
	rnd := func(n int) []T {
		v := make([]T, n)
		for i := range v {
			v[i] = T(r.Float64()*2 - 1)
		}
		return v
	}
	av, bv, cv := rnd(g.m*g.k), rnd(g.k*g.n), rnd(g.m*g.n)
	// A as the transpose of a K×M matrix when transA: the memory holds Aᵀ.
	var a blas.Matrix
	var abuf []T
	if g.transA == 1 {
		at := make([]T, g.k*g.m)
		for i := range g.m {
			for j := range g.k {
				at[j*g.m+i] = av[i*g.k+j]
			}
		}
		base := blas.Matrix{Rows: g.k, Cols: g.m, Layout: g.la}
		if g.padBy > 0 {
			base.Stride = map[blas.Layout]int{blas.RowMajor: g.m, blas.ColMajor: g.k}[g.la] + g.padBy
		}
		abuf = layOut(base, at)
		a = base.T()
	} else {
		a = blas.Matrix{Rows: g.m, Cols: g.k, Layout: g.la}
		if g.padBy > 0 {
			a.Stride = map[blas.Layout]int{blas.RowMajor: g.k, blas.ColMajor: g.m}[g.la] + g.padBy
		}
		abuf = layOut(a, av)
	}
	b := blas.Matrix{Rows: g.k, Cols: g.n, Layout: g.lb}
	c := blas.Matrix{Rows: g.m, Cols: g.n, Layout: g.lc}
	if g.padBy > 0 {
		c.Stride = map[blas.Layout]int{blas.RowMajor: g.n, blas.ColMajor: g.m}[g.lc] + g.padBy
	}
	bbuf, cbuf := layOut(b, bv), layOut(c, cv)
	var err error
	if a.Mem, err = cuda.AllocFrom(ctx, abuf); err != nil {
		t.Fatal(err)
	}
	defer a.Mem.Close()
	if b.Mem, err = cuda.AllocFrom(ctx, bbuf); err != nil {
		t.Fatal(err)
	}
	defer b.Mem.Close()
	if c.Mem, err = cuda.AllocFrom(ctx, cbuf); err != nil {
		t.Fatal(err)
	}
	defer c.Mem.Close()
	const alpha, beta = 1.5, -0.5
	if err := blas.Gemm(h, T(alpha), a, b, T(beta), c); err != nil {
		t.Fatalf("%v: %v", g, err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	out := make([]T, len(cbuf))
	if err := cuda.CopyFromDevice(out, c.Mem.(*cuda.DeviceMemory)); err != nil {
		t.Fatal(err)
	}
	got := readBack(c, out)
	worst := 0.0
	for i := range g.m {
		for j := range g.n {
			want, scale := beta*float64(cv[i*g.n+j]), 1.0
			for p := range g.k {
				x := float64(av[i*g.k+p]) * float64(bv[p*g.n+j])
				want += alpha * x
				scale += math.Abs(alpha * x)
			}
			worst = max(worst, math.Abs(float64(got[i*g.n+j])-want)/scale)
		}
	}
	if worst > tol {
		t.Fatalf("%v: relative error %.3g, more than %.3g", g, worst, tol)
	}
	// The padding of C is not written.
	for i, v := range out {
		if v != cbuf[i] && !isElement(c, i) {
			t.Fatalf("%v: padding element %d of C written", g, i)
		}
	}
}

// isElement reports whether buffer index i holds an element of x.
func isElement(x blas.Matrix, i int) bool {
	stride := x.Stride
	if stride == 0 {
		return true
	}
	inner := x.Cols
	if x.Layout == blas.ColMajor {
		inner = x.Rows
	}
	return i%stride < inner
}

func gemmCases() []gemmCase {
	var cs []gemmCase
	for _, la := range []blas.Layout{blas.RowMajor, blas.ColMajor} {
		for _, lb := range []blas.Layout{blas.RowMajor, blas.ColMajor} {
			for _, lc := range []blas.Layout{blas.RowMajor, blas.ColMajor} {
				for _, tr := range []int{0, 1} {
					cs = append(cs, gemmCase{m: 37, k: 19, n: 23, la: la, lb: lb, lc: lc, transA: tr, padBy: 3 * tr})
				}
			}
		}
	}
	return append(cs, gemmCase{m: 1, k: 512, n: 300}, gemmCase{m: 64, k: 48, n: 32, lc: blas.ColMajor})
}

func TestGemmMatchesCPU(t *testing.T) {
	ctx, s, h := needHandle(t)
	for _, g := range gemmCases() {
		checkGemm[float32](t, ctx, s, h, g, 1e-5)
		checkGemm[float64](t, ctx, s, h, g, 1e-13)
	}
	t.Logf("%d shapes and layouts, float32 and float64, match the CPU", len(gemmCases()))
	if err := h.SetTF32(true); err != nil {
		t.Fatal(err)
	}
	checkGemm[float32](t, ctx, s, h, gemmCase{m: 128, k: 256, n: 64}, 2e-3)
}

// TestGemmFromManyGoroutines shares one handle, and so one stream, between
// goroutines that multiply and one that closes clones: run it with -race.
func TestGemmFromManyGoroutines(t *testing.T) {
	ctx, s, h := needHandle(t)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine, err := h.Clone()
			if err != nil {
				t.Error(err)
				return
			}
			defer mine.Close()
			for i := range 10 {
				checkGemm[float32](t, ctx, s, mine, gemmCase{m: 16 + w, k: 8 + i, n: 12}, 1e-5)
			}
		}()
	}
	wg.Wait()
}

func TestClosedHandle(t *testing.T) {
	_, _, h := needHandle(t)
	c, err := h.Clone()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.SetTF32(true); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("SetTF32 after Close = %v, want ErrClosed", err)
	}
	if c.Stream() != nil || h.Stream() == nil {
		t.Fatal("Stream of the closed and the open handle")
	}
}

// TestNewWithoutCuBLAS runs in a child process with GOCUDA_LIBCUBLAS
// pointing nowhere: New fails with an error matching cublas.ErrNoLibrary.
func TestNewWithoutCuBLAS(t *testing.T) {
	if os.Getenv("GOCUDA_BLAS_CHILD") != "" {
		ctx := libtest.Context(t)
		s, err := cuda.NewStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		before := cuda.LiveObjects()
		_, err = blas.New(s)
		if !errors.Is(err, cublas.ErrNoLibrary) || !strings.Contains(err.Error(), "/nonexistent/libcublas.so") {
			t.Fatalf("New = %v, want cublas.ErrNoLibrary naming the path", err)
		}
		if after := cuda.LiveObjects(); after != before {
			t.Fatalf("live objects %+v after, %+v before", after, before)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNewWithoutCuBLAS$", "-test.v")
	cmd.Env = append(os.Environ(), "GOCUDA_BLAS_CHILD=1", cublas.LibraryEnv+"=/nonexistent/libcublas.so")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Skipf("child skipped:\n%s", out)
	}
}

func TestHandleMovesToAnotherStream(t *testing.T) {
	ctx, _, h := needHandle(t)
	s2, err := cuda.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := h.SetStream(s2); err != nil {
		t.Fatal(err)
	}
	if h.Stream().Raw() != s2.Raw() {
		t.Fatal("the handle is not on the new stream")
	}
	// Synchronizing only the new stream is enough to see the result.
	checkGemm[float32](t, ctx, s2, h, gemmCase{m: 33, k: 17, n: 9}, 1e-5)
}
