//go:build linux && (amd64 || arm64)

package blas

import (
	"fmt"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cublas"
)

// Float is the element types of Gemm.
type Float interface{ ~float32 | ~float64 }

// Gemm computes C = alpha·A·B + beta·C on the handle's stream
// (cublasSgemm for float32, cublasDgemm for float64). A is M×K, B K×N and C
// M×N, each in its own layout; use T for a transposed operand. C must not
// share memory with A or B. It returns when the work is queued: synchronize
// the stream, or copy on it, to see C.
//
// When C is a batch (its Batch's Count above 1), Gemm computes
// C[i] = alpha·A[i]·B[i] + beta·C[i] for each matrix of the batch in one
// call (cublasSgemmStridedBatched, cublasDgemmStridedBatched); A and B
// are batches of the same count, or single matrices used for every
// product. See Batch.
func Gemm[T Float](h *Handle, alpha T, a, b Matrix, beta T, c Matrix) error {
	const op = "Gemm"
	size := int(unsafe.Sizeof(alpha))
	if err := checkGemm(op, size, a, b, c); err != nil {
		return err
	}
	for _, x := range []struct {
		name string
		m    cuda.Memory
	}{{"A", a.Mem}, {"B", b.Mem}, {"C", c.Mem}} {
		if err := elementsOf[T](op, x.name, x.m); err != nil {
			return err
		}
	}
	g := plan(a, b, c)
	// Raw addresses before Call: see cuda.LibraryObject.Call.
	pa, pb, pc := memPtr(g.a.Mem), memPtr(g.b.Mem), memPtr(c.Mem)
	return h.object().Call("blas."+op, func(st blasState) error {
		raw := st.h
		if g.m == 0 || g.n == 0 {
			return nil
		}
		if g.batch > 1 {
			return gemmStridedBatched(op, raw, g, alpha, beta, pa, pb, pc)
		}
		switch size {
		case 4:
			al, be := float32(alpha), float32(beta)
			return check("blas."+op, "cublasSgemm_v2", cublas.Sgemm(raw, g.opA, g.opB, g.m, g.n, g.k,
				&al, (*float32)(devptr.Of(pa)), g.lda, (*float32)(devptr.Of(pb)), g.ldb, &be, (*float32)(devptr.Of(pc)), g.ldc))
		default:
			al, be := float64(alpha), float64(beta)
			return check("blas."+op, "cublasDgemm_v2", cublas.Dgemm(raw, g.opA, g.opB, g.m, g.n, g.k,
				&al, (*float64)(devptr.Of(pa)), g.lda, (*float64)(devptr.Of(pb)), g.ldb, &be, (*float64)(devptr.Of(pc)), g.ldc))
		}
	}, a.Mem, b.Mem, c.Mem)
}

// gemmStridedBatched is Gemm's call for a batch.
func gemmStridedBatched[T Float](op string, raw cublas.CublasHandle_t, g gemmPlan, alpha, beta T, pa, pb, pc cu.CUdeviceptr) error {
	switch unsafe.Sizeof(alpha) {
	case 4:
		al, be := float32(alpha), float32(beta)
		return check("blas."+op, "cublasSgemmStridedBatched", cublas.SgemmStridedBatched(raw, g.opA, g.opB, g.m, g.n, g.k,
			&al, (*float32)(devptr.Of(pa)), g.lda, g.strideA, (*float32)(devptr.Of(pb)), g.ldb, g.strideB,
			&be, (*float32)(devptr.Of(pc)), g.ldc, g.strideC, g.batch))
	default:
		al, be := float64(alpha), float64(beta)
		return check("blas."+op, "cublasDgemmStridedBatched", cublas.DgemmStridedBatched(raw, g.opA, g.opB, g.m, g.n, g.k,
			&al, (*float64)(devptr.Of(pa)), g.lda, g.strideA, (*float64)(devptr.Of(pb)), g.ldb, g.strideB,
			&be, (*float64)(devptr.Of(pc)), g.ldc, g.strideC, g.batch))
	}
}

// checkGemm checks the shapes of C = A·B and each matrix's memory.
func checkGemm(op string, elemSize int, a, b, c Matrix) error {
	if err := gemmShapes(op, a, b, c); err != nil {
		return err
	}
	for _, x := range []struct {
		name string
		m    Matrix
	}{{"A", a}, {"B", b}, {"C", c}} {
		if err := x.m.checkMem(op, x.name, elemSize); err != nil {
			return err
		}
	}
	if c.Mem != nil && (c.Mem == a.Mem || c.Mem == b.Mem || overlaps(c, a, elemSize) || overlaps(c, b, elemSize)) {
		return fmt.Errorf("blas: %s: C shares its memory with A or B", op)
	}
	return nil
}

// gemmShapes checks each matrix's description and that C = A·B fits.
func gemmShapes(op string, a, b, c Matrix) error {
	for _, x := range []struct {
		name string
		m    Matrix
	}{{"A", a}, {"B", b}, {"C", c}} {
		if err := x.m.checkShape(op, x.name); err != nil {
			return err
		}
	}
	switch {
	case a.Cols != b.Rows:
		return fmt.Errorf("blas: %s: A is %d×%d and B is %d×%d: A's columns must equal B's rows", op, a.Rows, a.Cols, b.Rows, b.Cols)
	case c.Rows != a.Rows || c.Cols != b.Cols:
		return fmt.Errorf("blas: %s: A·B is %d×%d but C is %d×%d", op, a.Rows, b.Cols, c.Rows, c.Cols)
	}
	return batchShapes(op, a, b, c)
}

// gemmPlan is a checked Gemm as cuBLAS takes it: column-major, or, for
// cuBLASLt's row-order formulation, every matrix in row-major order.
type gemmPlan struct {
	// order is the order the library reads every matrix in; swap says
	// that C is computed as Cᵀ = Bᵀ·Aᵀ (C's memory read in that order is
	// Cᵀ), the first operand being B.
	order         Layout
	swap          bool
	opA, opB      cublas.CublasOperation_t
	m, n, k       int32
	a, b          Matrix // the first and second operands the library reads
	lda, ldb, ldc int32
	// batch is the number of products; with more than one, the strides
	// between the matrices of a, b and C (0: one matrix for all).
	batch                     int32
	strideA, strideB, strideC int64
}

// plan maps C = A·B to cuBLAS's column-major GEMM. A column-major C is
// computed as it is, each operand transposed (OP_T) when its memory is
// row-major. A row-major C is, in column-major terms, Cᵀ = Bᵀ·Aᵀ: the
// operands swap, and each is transposed when its memory is column-major.
func plan(a, b, c Matrix) gemmPlan { return planIn(a, b, c, ColMajor) }

// planIn maps C = A·B to a GEMM whose matrices are all read in order:
// plan's mapping with the two layouts' roles exchanged for RowMajor. A C
// in that order is computed as it is; one in the other order is Cᵀ =
// Bᵀ·Aᵀ. An operand is transposed (OP_T) when its memory is not in the
// order it is read in (for the swapped operands, of Bᵀ and Aᵀ: when B's or
// A's memory is in that order).
func planIn(a, b, c Matrix, order Layout) gemmPlan {
	other := RowMajor
	if order == RowMajor {
		other = ColMajor
	}
	op := func(x Matrix, l Layout) cublas.CublasOperation_t {
		if x.Layout == l {
			return cublas.CUBLAS_OP_N
		}
		return cublas.CUBLAS_OP_T
	}
	g := gemmPlan{order: order, k: int32(a.Cols), ldc: int32(c.stride())}
	if c.Layout == order {
		g.a, g.b = a, b
		g.opA, g.opB = op(a, order), op(b, order)
		g.m, g.n = int32(c.Rows), int32(c.Cols)
	} else {
		g.swap = true
		g.a, g.b = b, a
		g.opA, g.opB = op(b, other), op(a, other)
		g.m, g.n = int32(c.Cols), int32(c.Rows)
	}
	g.lda, g.ldb = int32(g.a.stride()), int32(g.b.stride())
	if g.batch = int32(c.count()); g.batch > 1 {
		g.strideA, g.strideB, g.strideC = g.a.operandStride(), g.b.operandStride(), c.batchStride()
	}
	return g
}

// overlaps reports whether the bytes x and y span in their memory meet:
// two Sub views of one allocation may.
func overlaps(x, y Matrix, elemSize int) bool {
	px, py := uint64(memPtr(x.Mem)), uint64(memPtr(y.Mem))
	nx, ny := uint64(x.span())*uint64(elemSize), uint64(y.span())*uint64(elemSize)
	return px != 0 && py != 0 && nx > 0 && ny > 0 && px < py+ny && py < px+nx
}
