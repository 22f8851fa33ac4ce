//go:build linux && (amd64 || arm64) && !nccl22203

package nccl

import (
	"testing"

	"github.com/gocuda/gocuda/generated/nccl"
)

// TestFP8TypesAreTheHeaders: the FP8 types' values, declared here for the
// build of 2.22.3's header, which lacks them, are those of the header that
// has them (2.28.3).
func TestFP8TypesAreTheHeaders(t *testing.T) {
	if ncclFloat8e4m3 != nccl.NcclFloat8e4m3 || ncclFloat8e5m2 != nccl.NcclFloat8e5m2 {
		t.Errorf("FP8 types %d and %d, nccl.h of %d says %d and %d",
			ncclFloat8e4m3, ncclFloat8e5m2, nccl.HeaderVersion(), nccl.NcclFloat8e4m3, nccl.NcclFloat8e5m2)
	}
}
