// Package sparse is cuSPARSE's generic API for Go programs: sparse
// matrix-vector and matrix-matrix products, sparse-sparse products and
// triangular solves on a *cuda.Stream, with the safety of package cuda.
//
// # Handles
//
// A Handle is a cuSPARSE handle bound to a stream. It holds its own clone
// of the stream (and through it the context), follows package cuda's
// handle rules (Clone, Close per handle, the last Close destroys after
// the calls in flight, ErrClosed after Close and on nil, cleanup when
// dropped), and may be used from any goroutine: calls bind its context
// themselves, and calls on one handle, its clones included, take turns,
// as cuSPARSE keeps a handle's state on the host.
//
//	h, err := sparse.New(stream)
//	defer h.Close()
//
// # Matrices and vectors
//
// A Matrix[T, I] describes a sparse matrix over three Slices of device
// memory that stay the caller's: NewCSR (row offsets, column indices,
// values), NewCSC (column offsets, row indices, values) and NewCOO (row
// indices, column indices, values), and from CUDA 12 on NewBSR (CSR of
// dense blocks, for SpMV), indices from 0. T is float32,
// float64, complex64 or complex128; I is int32 or int64. A Dense[T]
// describes a dense matrix in a Slice, column-major or row-major, packed
// (NewDense) or with a leading dimension (NewDenseLD). A dense vector is a
// Slice itself.
//
//	A, err := sparse.NewCSR(rows, cols, offsets, columns, values) // *cuda.Slice[int32], [int32], [float32]
//	err = sparse.SpMV(h, sparse.NoTrans, 1, A, x, 0, y)         // y = A·x
//	err = sparse.SpMM(h, sparse.Trans, 2, A, B, 1, C)           // C = 2·Aᵀ·B + C
//	P, err := sparse.SpGEMM(h, 1, A, A2)                        // P = A·A2, a new CSR matrix
//	defer P.Close()
//	err = sparse.SpSV(h, sparse.NoTrans, 1, L, sparse.Lower, sparse.NonUnit, b, x) // L·x = b
//	err = sparse.SpSM(h, sparse.Trans, 1, L, sparse.Lower, sparse.Unit, B, X)     // Lᵀ·X = B, B and X dense
//
// A TriangularSolver keeps the analysis of its matrix for the solves that
// follow (Solve for vectors, SolveDense for dense matrices); SpSV and SpSM
// make one for a single solve.
//
// The element types of a call agree by construction: the matrix, vectors
// and scalars of SpMV are all of one T, so a float64 vector for a float32
// matrix does not compile. Everything else is checked before cuSPARSE is
// called, and a mismatch is an error naming it, with nothing written: the
// lengths of the Slices against the matrix's shape and number of entries
// (made from the values' length), shapes against each other after the
// operation, leading dimensions, outputs that overlap inputs, memory of
// another context than the handle's, and the formats and shapes each
// operation takes (SpGEMM multiplies CSR matrices; a triangular solve
// takes a square CSR or COO matrix). Nil and closed Slices, matrices and
// handles give errors matching cuda.ErrClosed. The contents of the index
// arrays are not read: malformed indices give cuSPARSE's undefined
// results.
//
// A Matrix or Dense is a plain description that any number of goroutines
// and handles may use at once: the cuSPARSE descriptors (cusparseCreateCsr
// and the like) belong to the handle. SpMV and SpMM keep the descriptors
// they make, and the workspace sizes cuSPARSE gives them, in the handle,
// keyed by everything a descriptor holds (format, shape, addresses,
// types): a loop of products on the same operands makes no descriptor
// after its first call, as a C program that makes them once. The cache is
// bounded (emptied when it holds 64 descriptors of a kind) and destroyed
// with the handle. SpGEMM's and the solvers' descriptors
// are their own.
//
// # Work and memory
//
// Each operation is queued on the handle's stream and returns when it is
// queued: synchronize the stream, or copy on it, to see the results.
// SpMV and SpMM run in a workspace the handle keeps, allocated from the
// stream's memory pool in stream order (cuMemAllocAsync), grown (at least
// twofold) to the largest size cuSPARSE asks for and freed by the last
// Close: every call on a handle is queued on its one stream, so a call's
// workspace is free for the next call in stream order, and products cost
// no allocation once it is large enough. SpGEMM's steps allocate their
// buffers, and C's Slices, on the stream in stream order, and free the
// buffers in stream order once the last step is queued: their sizes are
// known only after the steps before them, and they are not needed again.
// A TriangularSolver keeps the analysis buffers of its matrix until its
// Close, as cuSPARSE needs them for every solve.
//
// SpGEMM waits for the handle's stream: cuSPARSE's compute step learns
// the product's number of entries on the host. The other operations do
// not wait, and may be captured into a graph once they need no new
// memory: a product whose workspace the handle has, a solve whose
// analysis the solver has made. Make each call once before the capture;
// one that would allocate while its stream captures is refused, saying
// so. As graphs may use them, workspaces the handle outgrows are kept
// until its last Close, after which no graph captured from its calls may
// be launched.
//
// # Errors
//
// Errors from cuSPARSE are cuda.LibraryError values carrying its status
// (errors.Is(err, cusparse.CUSPARSE_STATUS_NOT_SUPPORTED)) and the
// function that failed; a missing library matches cusparse.ErrNoLibrary.
//
// # Testing without a GPU
//
// On package cudatest's fake driver, a fake cuSPARSE (internal/fakecusparse)
// computes the same operations on the host, in stream order, seen by the
// fake driver's race detector, within floating-point rounding of the real
// library's results.
package sparse
