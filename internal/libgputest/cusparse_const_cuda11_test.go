//go:build linux && (amd64 || arm64) && cuda11080

package libgputest

import "github.com/gocuda/gocuda/generated/cusparse"

// CUDA 11.8's generic API has no cusparseConst… descriptor types: the
// read-only descriptors are the plain ones.
type (
	constSpMat = cusparse.CusparseSpMatDescr_t
	constDnVec = cusparse.CusparseDnVecDescr_t
)
