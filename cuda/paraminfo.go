//go:build !cuda11080

package cuda

import "github.com/gocuda/gocuda/generated/cu"

// maxParams bounds the parameter query: a kernel's parameters take at most
// 32764 bytes.
const maxParams = 32764

// paramSizes returns the sizes of f's parameters in bytes
// (cuFuncGetParamInfo, CUDA 12.4), and false where the driver cannot say:
// a driver older than 12.4 lacks the function, and then launches go
// unchecked. The call needs f's context current.
//
//cudriver:optional cuFuncGetParamInfo
func paramSizes(f cu.CUfunction) ([]uint32, bool) {
	var sizes []uint32
	for i := range maxParams {
		var off, size uint64
		switch err := cu.FuncGetParamInfo(f, uint64(i), &off, &size); err {
		case nil:
			sizes = append(sizes, uint32(size))
		case error(cu.CUDA_ERROR_INVALID_VALUE):
			return sizes, true // past the last parameter
		default:
			return nil, false // ErrMissingFunction, or a driver that cannot tell
		}
	}
	return nil, false
}
