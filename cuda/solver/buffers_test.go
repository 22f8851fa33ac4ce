//go:build linux && (amd64 || arm64)

package solver

import (
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/generated/cu"
)

// TestBuffersAlignTheWorkspaceAndZeroTheInfoWords: as the buffers grow,
// the workspace stays at the allocation's alignment, the info words lie
// past its end, and they start at zero.
func TestBuffersAlignTheWorkspaceAndZeroTheInfoWords(t *testing.T) {
	_, s := libtest.Stream(t)
	var b buffers
	err := s.Context().Do(func() error {
		defer b.free("test")
		for _, want := range []struct{ infoWords, workBytes uint64 }{{1, 1000}, {3, 1000}, {3, 70001}, {8, 12}} {
			if err := b.reserve("test", want.infoWords, want.workBytes, cu.CUstream(s.Raw())); err != nil {
				return err
			}
			if b.work()%workAlign != 0 {
				t.Errorf("reserve(%d, %d): workspace at %#x, not %d-byte aligned", want.infoWords, want.workBytes, b.work(), workAlign)
			}
			if b.info() < b.work()+cu.CUdeviceptr(want.workBytes) {
				t.Errorf("reserve(%d, %d): info words at %#x, inside the workspace at %#x", want.infoWords, want.workBytes, b.info(), b.work())
			}
			if err := cu.StreamSynchronize(cu.CUstream(s.Raw())); err != nil {
				return err
			}
			words := make([]int32, want.infoWords)
			if err := cu.MemcpyDtoH(unsafe.Pointer(&words[0]), b.info(), uint64(4*len(words))); err != nil {
				return err
			}
			for i, w := range words {
				if w != 0 {
					t.Errorf("reserve(%d, %d): info word %d is %d, want 0", want.infoWords, want.workBytes, i, w)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
