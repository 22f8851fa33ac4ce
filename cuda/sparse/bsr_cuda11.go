//go:build linux && (amd64 || arm64) && cuda11080

package sparse

import (
	"errors"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cusparse"
	"github.com/gocuda/gocuda/generated/libtypes"
)

// bsrAvailable: CUDA 11's cusparse.h has no BSR matrices in the generic
// API; NewBSR refuses before any is made.
const bsrAvailable = false

func createBsr(*cusparse.CusparseSpMatDescr_t, int64, int64, int64, int64, int64, unsafe.Pointer, unsafe.Pointer, unsafe.Pointer, cusparse.CusparseIndexType_t, libtypes.CudaDataType, cusparse.CusparseOrder_t) error {
	return errors.New("sparse: no BSR matrices in CUDA 11's cuSPARSE")
}
