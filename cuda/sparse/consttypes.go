//go:build linux && (amd64 || arm64) && !cuda11080

package sparse

import "github.com/gocuda/gocuda/generated/cusparse"

// The descriptor types of cuSPARSE's read-only operands: from 12.0 on,
// cusparse.h declares const descriptors, which are the same pointers.
type (
	constSpMat = cusparse.CusparseConstSpMatDescr_t
	constDnVec = cusparse.CusparseConstDnVecDescr_t
	constDnMat = cusparse.CusparseConstDnMatDescr_t
)
