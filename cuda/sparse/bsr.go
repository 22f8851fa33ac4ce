//go:build linux && (amd64 || arm64) && !cuda11080

package sparse

import (
	"unsafe"

	"github.com/gocuda/gocuda/generated/cusparse"
	"github.com/gocuda/gocuda/generated/libtypes"
)

// bsrAvailable: cusparse.h declares cusparseCreateBsr from 12.0 on.
const bsrAvailable = true

func createBsr(d *cusparse.CusparseSpMatDescr_t, brows, bcols, bnnz, rbs, cbs int64, p, q, v unsafe.Pointer, it cusparse.CusparseIndexType_t, vt libtypes.CudaDataType, order cusparse.CusparseOrder_t) error {
	return cusparse.CreateBsr(d, brows, bcols, bnnz, rbs, cbs, p, q, v, it, it, cusparse.CUSPARSE_INDEX_BASE_ZERO, vt, order)
}
