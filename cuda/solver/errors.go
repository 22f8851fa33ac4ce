//go:build linux && (amd64 || arm64)

package solver

import (
	"errors"
	"fmt"
)

// The conditions cuSOLVER reports in its info result, which an *InfoError
// matches with errors.Is.
var (
	// ErrSingular: LU found an exactly zero pivot U(i,i) (Getrf). The
	// factorization is complete, but U is singular: solving with it
	// would divide by zero.
	ErrSingular = errors.New("the matrix is singular")
	// ErrNotPositiveDefinite: Cholesky found a leading minor of order i
	// that is not positive definite (Potrf); the factorization stopped
	// there.
	ErrNotPositiveDefinite = errors.New("the matrix is not positive definite")
	// ErrNoConvergence: the eigenvalue or singular value iteration did
	// not converge (Syevd, Gesvd: i elements left unconverged; Gesvdj:
	// info min(m, n)+1).
	ErrNoConvergence = errors.New("the iteration did not converge")
	// ErrIllegalArgument: cuSOLVER found argument i (counted after the
	// handle, from 1) illegal. This package checks arguments before
	// cuSOLVER sees them, so it means a disagreement between the two.
	ErrIllegalArgument = errors.New("an argument is illegal")
	// errUnexpectedInfo is a positive info from a call that documents
	// none.
	errUnexpectedInfo = errors.New("cuSOLVER reported an info the call does not document")
)

// InfoError is a call's info result that is not 0: what it means (Err,
// one of the Err variables above, which errors.Is matches) and where
// (Index, 1-based: the pivot, the order of the minor, the number of
// unconverged elements, or the illegal argument's position).
type InfoError struct {
	Op    string // "Getrf"
	Func  string // "cusolverDnDgetrf"
	Info  int    // cuSOLVER's info as it came
	Index int    // Info, or -Info for an illegal argument
	// Batch is the matrix the info is of in a batched call's batch,
	// from 0; -1 for a call on one matrix.
	Batch int
	Err   error
}

func (e *InfoError) Error() string {
	var where string
	switch e.Err {
	case ErrSingular:
		where = fmt.Sprintf("pivot U(%d,%d) is exactly zero", e.Index, e.Index)
	case ErrNotPositiveDefinite:
		where = fmt.Sprintf("the leading minor of order %d is not positive definite", e.Index)
	case ErrNoConvergence:
		where = fmt.Sprintf("info %d", e.Info)
	case ErrIllegalArgument:
		where = fmt.Sprintf("argument %d is illegal", e.Index)
	default:
		where = fmt.Sprintf("info %d", e.Info)
	}
	if e.Batch >= 0 {
		where = fmt.Sprintf("matrix %d of the batch: %s", e.Batch, where)
	}
	return fmt.Sprintf("solver: %s: %s: %s: %v", e.Op, e.Func, where, e.Err)
}

func (e *InfoError) Unwrap() error { return e.Err }

// infoError turns a call's info into its error: positive is the call's
// own condition, positive (nil for a call that has none).
func infoError(op, fn string, info int, positive error) error {
	switch {
	case info == 0:
		return nil
	case info < 0:
		return &InfoError{Op: op, Func: fn, Info: info, Index: -info, Batch: -1, Err: ErrIllegalArgument}
	case positive == nil:
		return &InfoError{Op: op, Func: fn, Info: info, Index: info, Batch: -1, Err: errUnexpectedInfo}
	}
	return &InfoError{Op: op, Func: fn, Info: info, Index: info, Batch: -1, Err: positive}
}
