// Package solver is dense cuSOLVER for Go programs: LU, Cholesky and QR
// factorizations, linear solves, symmetric eigenvalues and singular value
// decompositions of matrices in device memory, on a *cuda.Stream, with
// the safety of package cuda.
//
// # Handles
//
// A Handle is a cuSOLVER dense handle (cusolverDnHandle_t) bound to a
// stream. It holds its own clone of the stream (and through it the
// context), follows package cuda's handle rules (Clone, Close per handle,
// the last Close destroys after the calls in flight, ErrClosed after
// Close and on nil, cleanup when dropped), and may be used from any
// goroutine: calls bind its context themselves, and calls on one handle,
// its clones included, take turns.
//
//	h, err := solver.New(stream)
//	defer h.Close()
//	a := solver.Matrix[float64]{Mem: da, Rows: n, Cols: n}   // column-major
//	b := solver.Matrix[float64]{Mem: db, Rows: n, Cols: nrhs}
//	ipiv, err := cuda.AllocSlice[int32](stream, n)
//	err = solver.Getrf(h, a, ipiv)                // P·A = L·U, in place
//	err = solver.Getrs(h, solver.NoTrans, a, ipiv, b) // B = A⁻¹·B
//
// # Matrices
//
// A Matrix is column-major, cuSOLVER's and LAPACK's order: element
// (i, j) is element i + j·Stride of its *cuda.Slice, Stride (the leading
// dimension) at least Rows, 0 for packed columns. A Go program that holds
// a matrix row by row holds its transpose, column by column: factor
// that, and solve with the transpose (Getrf of the row-major A's memory
// factors Aᵀ, and Getrs with Trans then solves A·x = b), or transpose it
// first. Functions are
// generic over float32 and float64 and call cuSOLVER's S or D function.
// Results go where LAPACK puts them: the factors over the matrix, the
// pivots (1-based, as int32), Householder scalars, eigenvalues and
// singular values into the slices given.
//
// The calls are Getrf and Getrs (LU with partial pivoting), Potrf and
// Potrs (Cholesky), Geqrf and Ormqr (QR, Q applied without being formed),
// Syevd (symmetric eigenvalues and vectors), Gesvd (singular values by
// bidiagonalization, m ≥ n) and Gesvdj (by Jacobi rotations, any shape).
//
// A Batch makes a matrix the first of a batch of matrices of its shape,
// a fixed number of elements apart in its memory: PotrfBatched and
// PotrsBatched factor and solve a whole batch of small systems in one
// call (cuSOLVER's potrfBatched and potrsBatched, one right-hand side per
// matrix), each matrix that fails named by its place in the batch.
//
// Every argument is checked before cuSOLVER sees it: shapes against each
// other, strides against shapes, sizes against cuSOLVER's 32-bit ones,
// and each slice against the elements the call reads or writes (nil or
// closed memory matches cuda.ErrClosed). A refused call has changed
// nothing. A matrix with no rows or no columns is no work and no error.
//
// # Workspaces and info
//
// Each call asks cuSOLVER for the workspace it needs (the _bufferSize
// functions) and uses the handle's device memory for it and for the words
// where cuSOLVER writes its info result. The handle (with its clones)
// keeps that memory from call to call, grows it in its stream's order
// when a call needs more (cuMemAllocAsync), and frees it when its last
// Close destroys the cuSOLVER handle: a loop of solves allocates nothing.
// A call queues the work, waits for the stream and reads info back. So
// every call synchronizes: it
// returns when its work, and the work queued before it on the stream, is
// done. That is the choice of this package: cuSOLVER's info says whether
// the result means anything (a singular or indefinite matrix is found
// only on the device), an error returned by the call that caused it
// cannot be forgotten the way a separate check can, and the wait costs
// microseconds next to a factorization's milliseconds. It also means the
// calls cannot be captured into a graph.
//
// A non-zero info is an *InfoError naming the call and the index:
//
//	err := solver.Potrf(h, solver.Lower, a)
//	var ie *solver.InfoError
//	if errors.Is(err, solver.ErrNotPositiveDefinite) && errors.As(err, &ie) {
//		// the leading minor of order ie.Index is not positive definite
//	}
//
// ErrSingular (Getrf: pivot U(i,i) is exactly zero), ErrNotPositiveDefinite
// (Potrf, PotrfBatched), ErrNoConvergence (Syevd, Gesvd, Gesvdj) and ErrIllegalArgument (cuSOLVER
// refused argument i, counted from 1 after the handle; the checks before
// the call make it a disagreement between this package and the library)
// are what errors.Is matches.
//
// Errors from cuSOLVER itself carry its status (errors.Is(err,
// cusolver.CUSOLVER_STATUS_INVALID_VALUE)) and the function that failed;
// a missing library matches cusolver.ErrNoLibrary. Package cudatest's
// fake driver comes with a fake cuSOLVER (internal/fakecusolver) that
// computes the same factorizations on the host, so code using this
// package is tested without a GPU.
package solver
