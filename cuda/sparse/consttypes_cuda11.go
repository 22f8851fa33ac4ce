//go:build linux && (amd64 || arm64) && cuda11080

package sparse

import "github.com/gocuda/gocuda/generated/cusparse"

// CUDA 11's cusparse.h has no const descriptors: read-only operands take
// the plain ones.
type (
	constSpMat = cusparse.CusparseSpMatDescr_t
	constDnVec = cusparse.CusparseDnVecDescr_t
	constDnMat = cusparse.CusparseDnMatDescr_t
)
