// Package blas is cuBLAS for Go programs: matrix multiplies on a
// *cuda.Stream, with the safety of package cuda and the speed of cuBLAS.
//
// A Handle is a cuBLAS handle bound to a stream. It holds its own clone of
// the stream (and through it the context), follows package cuda's handle
// rules (Clone, Close per handle, the last Close destroys after the calls
// in flight, ErrClosed after Close and on nil, cleanup when dropped), and
// may be used from any goroutine: calls bind its context themselves.
//
//	h, err := blas.New(stream)
//	defer h.Close()
//	da, err := cuda.AllocSliceFrom(stream, aValues) // []float32 of m·k, row-major
//	a := blas.Matrix{Mem: da, Rows: m, Cols: k}   // row-major, packed
//	b := blas.Matrix{Mem: db, Rows: k, Cols: n}
//	c := blas.Matrix{Mem: dc, Rows: m, Cols: n}
//	err = blas.Gemm(h, 1, a, b, 0, c)             // C = A·B, float32
//	err = blas.Gemm(h, 1, a.T(), b2, 0, c2)       // C2 = Aᵀ·B2, no copy
//
// Go programs think in row-major order and cuBLAS in column-major. A
// Matrix says which of the two its memory holds (Layout; row-major when
// not said), and Gemm works out the operation cuBLAS must do, so no
// matrix is ever transposed silently: T returns the transposed view of a
// matrix (the same memory read the other way), and shapes are checked
// against each other and against the size of the memory before cuBLAS is
// called. A mismatch is an error naming both shapes.
//
// A Matrix with a Batch describes a batch of matrices of one shape, each
// a fixed number of elements after the one before (packed, with gaps, or
// interleaved like the heads of an attention layer); Gemm and
// LtHandle.Run multiply whole batches in one call (strided-batched GEMM),
// a single A or B serving every product. Host data in float16 and
// bfloat16 is cuda.Float16 and cuda.BFloat16, copied like any number.
//
// cuBLASLt multiplies (LtHandle.Run, with mixed precision, FP8 and
// epilogues) can be prepared once (LtHandle.Prepare gives an LtPlan that
// holds the descriptors and the algorithm, so that each call is one
// cublasLtMatmul) and tuned (LtHandle.Tune times cuBLASLt's candidates,
// in column and row order, and saves the fastest as a Plan).
//
// Errors from cuBLAS carry its status (errors.Is(err,
// cublas.CUBLAS_STATUS_NOT_SUPPORTED)) and the function that failed; a
// missing library matches cublas.ErrNoLibrary.
package blas
