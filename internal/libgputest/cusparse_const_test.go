//go:build linux && (amd64 || arm64) && !cuda11080

package libgputest

import "github.com/gocuda/gocuda/generated/cusparse"

// From CUDA 12.0 the generic API takes its read-only descriptors as the
// cusparseConst… types: these name them for cusparse_test.go.
type (
	constSpMat = cusparse.CusparseConstSpMatDescr_t
	constDnVec = cusparse.CusparseConstDnVecDescr_t
)
