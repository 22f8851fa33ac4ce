package cuda

import (
	"errors"
	"testing"

	"github.com/gocuda/gocuda/generated/cu"
)

// needTwoGPUs returns the primary contexts of devices 0 and 1, skipping
// with one device (the fake driver has two: see TestMain).
func needTwoGPUs(t *testing.T) (*Context, *Context) {
	t.Helper()
	_, ctx0 := needGPU(t)
	n, err := DeviceCount()
	must(t, err)
	if n < 2 {
		t.Skipf("%d device: peer copies need two", n)
	}
	dev1, err := GetDevice(1)
	must(t, err)
	ctx1, err := PrimaryContext(dev1)
	must(t, err)
	t.Cleanup(func() { must(t, ctx1.Close()) })
	return ctx0, ctx1
}

// skipWithoutPeerCopy skips when the driver lacks cuMemcpyPeer, and fails
// on any other error.
func skipWithoutPeerCopy(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, cu.ErrMissingFunction) || errors.Is(err, cu.CUDA_ERROR_NOT_FOUND) || errors.Is(err, cu.CUDA_ERROR_NOT_SUPPORTED) {
		t.Skipf("the driver has no peer copy: %v", err)
	}
	must(t, err)
}

func peerPattern(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i)*0.5 - 7
	}
	return x
}

// TestCopySlicePeer copies between the two devices, with and without peer
// access, synchronously and on a stream of either device, and checks the
// data.
func TestCopySlicePeer(t *testing.T) {
	ctx0, ctx1 := needTwoGPUs(t)
	const n = 1 << 12
	want := peerPattern(n)
	src, err := AllocSliceFrom(ctx0, want)
	must(t, err)
	defer src.Close()
	for _, enable := range []bool{false, true} {
		if enable {
			must(t, EnablePeers(ctx0, ctx1))
			must(t, EnablePeers(ctx0, ctx1)) // again: nil
		}
		dst, err := AllocSlice[float32](ctx1, n+3)
		must(t, err)
		must(t, dst.Fill(0))
		skipWithoutPeerCopy(t, CopySlicePeer(dst, src))
		got := make([]float32, n+3)
		must(t, dst.CopyTo(got))
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("peer access %v: element %d is %v, want %v", enable, i, got[i], want[i])
			}
		}
		if got[n] != 0 {
			t.Errorf("the copy wrote past the source's length: %v", got[n:])
		}
		// Back, on a stream of each device in turn.
		for _, sctx := range []*Context{ctx0, ctx1} {
			back, err := AllocSlice[float32](ctx0, n)
			must(t, err)
			s, err := NewStream(sctx)
			must(t, err)
			part, err := dst.Sub(0, n)
			must(t, err)
			must(t, CopySlicePeerAsync(s, back, part))
			must(t, s.Synchronize())
			got := make([]float32, n)
			must(t, back.CopyTo(got))
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("async copy on a stream of device %d: element %d is %v, want %v", sctx.Device().Ordinal(), i, got[i], want[i])
				}
			}
			must(t, part.Close())
			must(t, s.Close())
			must(t, back.Close())
		}
		must(t, dst.Close())
	}
}

// TestCopyPeerBytes is CopyPeer and CopyPeerAsync on DeviceMemory.
func TestCopyPeerBytes(t *testing.T) {
	ctx0, ctx1 := needTwoGPUs(t)
	src, err := AllocFrom(ctx0, []uint32{1, 2, 3, 4, 5})
	must(t, err)
	defer src.Close()
	dst, err := Alloc(ctx1, 20)
	must(t, err)
	defer dst.Close()
	skipWithoutPeerCopy(t, CopyPeer(dst, src))
	got := make([]uint32, 5)
	must(t, CopyFromDevice(got, dst))
	if got[0] != 1 || got[4] != 5 {
		t.Errorf("CopyPeer gave %v", got)
	}
	must(t, dst.MemsetD32(0))
	s, err := NewStream(ctx1)
	must(t, err)
	defer s.Close()
	must(t, CopyPeerAsync(s, dst, src))
	must(t, s.Synchronize())
	must(t, CopyFromDevice(got, dst))
	if got[0] != 1 || got[4] != 5 {
		t.Errorf("CopyPeerAsync gave %v", got)
	}
}

// TestCopyPeerChecks: sizes, overlap and closed or nil handles are refused
// before the driver, with or without two devices.
func TestCopyPeerChecks(t *testing.T) {
	_, ctx := needGPU(t)
	small, err := AllocSlice[float32](ctx, 4)
	must(t, err)
	defer small.Close()
	big, err := AllocSlice[float32](ctx, 8)
	must(t, err)
	defer big.Close()
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	invalid := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
			t.Errorf("%s: %v, want an error matching CUDA_ERROR_INVALID_VALUE", what, err)
		}
	}
	invalid("CopySlicePeer into a shorter slice", CopySlicePeer(small, big))
	invalid("CopySlicePeerAsync into a shorter slice", CopySlicePeerAsync(s, small, big))
	a, err := big.Sub(0, 6)
	must(t, err)
	defer a.Close()
	b, err := big.Sub(2, 8)
	must(t, err)
	defer b.Close()
	invalid("CopySlicePeer between overlapping views", CopySlicePeer(a, b))
	m4, err := Alloc(ctx, 4)
	must(t, err)
	defer m4.Close()
	m8, err := Alloc(ctx, 8)
	must(t, err)
	defer m8.Close()
	invalid("CopyPeer into smaller memory", CopyPeer(m4, m8))
	invalid("CopyPeerAsync into smaller memory", CopyPeerAsync(s, m4, m8))

	closedSlice, err := AllocSlice[float32](ctx, 4)
	must(t, err)
	must(t, closedSlice.Close())
	closedStream, err := NewStream(ctx)
	must(t, err)
	must(t, closedStream.Close())
	for what, err := range map[string]error{
		"nil destination":      CopySlicePeer(nil, small),
		"closed source":        CopySlicePeer(big, closedSlice),
		"closed stream":        CopySlicePeerAsync(closedStream, big, small),
		"nil stream":           CopyPeerAsync(nil, m8, m4),
		"nil memory":           CopyPeer(m8, nil),
		"EnablePeers with nil": EnablePeers(ctx, nil),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s: %v, want ErrClosed", what, err)
		}
	}
	// A copy within one context is a peer copy too, and an empty one does
	// nothing.
	must(t, big.Fill(3))
	skipWithoutPeerCopy(t, CopySlicePeer(small, a.mustSub(t, 0, 4)))
	empty, err := big.Sub(0, 0)
	must(t, err)
	defer empty.Close()
	must(t, CopySlicePeer(small, empty))
	got := make([]float32, 4)
	must(t, small.CopyTo(got))
	if got[0] != 3 || got[3] != 3 {
		t.Errorf("copy within one context gave %v", got)
	}
}

func (s *Slice[T]) mustSub(t *testing.T, i, j int) *Slice[T] {
	t.Helper()
	v, err := s.Sub(i, j)
	must(t, err)
	t.Cleanup(func() { v.Close() })
	return v
}

// TestEventAcrossDevices: an event recorded on a stream of device 0 and
// waited for by a stream of device 1 orders device 1's work after device
// 0's: device 0 fills a buffer, device 1 copies it once the event says the
// fill is done, and the copy sees the filled values.
func TestEventAcrossDevices(t *testing.T) {
	ctx0, ctx1 := needTwoGPUs(t)
	const n = 1 << 16
	s0, err := NewStream(ctx0)
	must(t, err)
	defer s0.Close()
	s1, err := NewStream(ctx1)
	must(t, err)
	defer s1.Close()
	ev, err := NewEvent(ctx0)
	must(t, err)
	defer ev.Close()
	src, err := AllocSlice[float32](ctx0, n)
	must(t, err)
	defer src.Close()
	dst, err := AllocSlice[float32](ctx1, n)
	must(t, err)
	defer dst.Close()
	must(t, dst.Fill(0))
	for round := 1; round <= 3; round++ {
		v := float32(round) * 1.25
		must(t, src.FillAsync(s0, v))
		must(t, ev.Record(s0))
		must(t, s1.WaitEvent(ev)) // a stream of device 1 waits for device 0's event
		must(t, CopySlicePeerAsync(s1, dst, src))
		must(t, s1.Synchronize())
		got := make([]float32, n)
		must(t, dst.CopyTo(got))
		for i, g := range got {
			if g != v {
				t.Fatalf("round %d: element %d is %v, want %v: the copy on device 1 did not wait for device 0's fill", round, i, g, v)
			}
		}
	}
	// The event's own device can be queried from anywhere.
	done, err := ev.Query()
	must(t, err)
	if !done {
		t.Error("the event is not done after device 1's stream, which waited for it, finished")
	}
}
