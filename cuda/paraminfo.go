//go:build !cuda11080

package cuda

import "github.com/gocuda/gocuda/generated/cu"

// paramSizes returns the layout of f's parameters, their sizes and offsets
// in bytes (cuFuncGetParamInfo, CUDA 12.4), and false where the driver
// cannot say: a driver older than 12.4 lacks the function, and then
// launches go unchecked. The call needs f's context current.
//
//cudriver:optional cuFuncGetParamInfo
func paramSizes(f cu.CUfunction) (paramLayout, bool) {
	var p paramLayout
	for i := range maxParams {
		var off, size uint64
		switch err := cu.FuncGetParamInfo(f, uint64(i), &off, &size); err {
		case nil:
			p.sizes = append(p.sizes, uint32(size))
			p.offsets = append(p.offsets, uint32(off))
		case error(cu.CUDA_ERROR_INVALID_VALUE):
			return p, true // past the last parameter
		default:
			return paramLayout{}, false // ErrMissingFunction, or a driver that cannot tell
		}
	}
	return paramLayout{}, false
}
