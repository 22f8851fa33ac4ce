//go:build !cuda11080

package lib

import "github.com/gocuda/gocuda/generated/cu"

// StreamID does without cuStreamGetId on a driver that lacks it.
//
//cudriver:optional cuStreamGetId
func StreamID(s cu.CUstream) (uint64, bool) {
	var id uint64
	if err := cu.StreamGetId(s, &id); err != nil {
		return 0, false
	}
	return id, cu.CtxSynchronize() == nil
}

// ContextID needs cuCtxGetId.
func ContextID(c cu.CUcontext) (uint64, error) {
	var id uint64
	return id, cu.CtxGetId(c, &id)
}
