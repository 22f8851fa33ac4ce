package cuda

import (
	"errors"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
)

// skipWithoutPools skips t when the driver lacks the memory pool
// functions, which CUDA 11.2 introduced, and returns err otherwise. The
// fake driver has them: there, their absence fails t.
func skipWithoutPools(t *testing.T, err error) error {
	t.Helper()
	if errors.Is(err, ErrMissingFunction) {
		if cudatest.Active() {
			t.Fatalf("the fake driver lacks memory pools: %v", err)
		}
		t.Skipf("the driver lacks memory pools (cuMemPool*, in drivers for CUDA 11.2 and later): %v", err)
	}
	return err
}

// TestMemPool checks that AllocAsync allocates from the default pool,
// allocates from a pool of its own on a stream, reads the usage counters,
// trims the pool and checks that the allocation kept the pool alive past
// its handle's Close.
func TestMemPool(t *testing.T) {
	dev, ctx := needGPU(t)
	if ok, err := dev.SupportsMemoryPools(); err != nil || !ok {
		t.Skipf("device without memory pools (%v)", err)
	}
	def, err := DefaultMemPool(dev)
	must(t, skipWithoutPools(t, err))
	defer def.Close()
	if def.Raw() == 0 {
		t.Fatal("default pool has no handle")
	}
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	const size = 16 << 20

	u0, err := def.Usage()
	must(t, err)
	a, err := AllocAsync(s, size)
	must(t, err)
	u1, err := def.Usage()
	must(t, err)
	if u1.Used < u0.Used+size || u1.Reserved < u1.Used || u1.UsedHigh < u1.Used || u1.ReservedHigh < u1.Reserved {
		t.Fatalf("default pool before AllocAsync of %d bytes: %+v; after: %+v, want Used up by the allocation", size, u0, u1)
	}
	must(t, a.Close())
	must(t, s.Synchronize())
	u2, err := def.Usage()
	must(t, err)
	if u2.Used > u1.Used-size {
		t.Fatalf("default pool with %d bytes allocated: %+v; once freed: %+v, want Used down by the allocation", size, u1, u2)
	}

	before := LiveObjects().MemPools
	p, err := NewMemPool(dev)
	must(t, err)
	must(t, p.SetReleaseThreshold(64<<20))
	m, err := AllocFromPool(s, p, size)
	must(t, err)
	must(t, m.MemsetD8Async(s, 3))
	must(t, s.Synchronize())
	u, err := p.Usage()
	must(t, err)
	if u.Used < size || u.Reserved < u.Used || u.UsedHigh < u.Used {
		t.Fatalf("usage with %d bytes allocated: %+v", size, u)
	}
	got := make([]byte, size)
	must(t, CopyFromDevice(got, m))
	if got[0] != 3 || got[size-1] != 3 {
		t.Fatalf("pool memory reads %d … %d after a memset to 3", got[0], got[size-1])
	}
	must(t, p.Close()) // the allocation still holds the pool
	if n := LiveObjects().MemPools; n != before+1 {
		t.Fatalf("live pools %d after the handle's Close, want %d while memory is allocated from it", n, before+1)
	}
	q, err := def.Clone() // the default pool: closing it never destroys it
	must(t, err)
	must(t, q.Close())
	must(t, m.Close())
	must(t, s.Synchronize())
	if n := LiveObjects().MemPools; n != before {
		t.Fatalf("live pools %d after the last allocation was freed, want %d", n, before)
	}
	must(t, def.Trim(0))
}

// TestMemPoolTrim: memory kept under the release threshold is given back
// by Trim.
func TestMemPoolTrim(t *testing.T) {
	dev, ctx := needGPU(t)
	if ok, err := dev.SupportsMemoryPools(); err != nil || !ok {
		t.Skipf("device without memory pools (%v)", err)
	}
	p, err := NewMemPool(dev)
	must(t, skipWithoutPools(t, err))
	defer p.Close()
	must(t, p.SetReleaseThreshold(1<<30))
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	m, err := AllocFromPool(s, p, 32<<20)
	must(t, err)
	must(t, m.Close())
	must(t, s.Synchronize())
	u, err := p.Usage()
	must(t, err)
	if u.Used != 0 || u.Reserved == 0 {
		t.Fatalf("after a free under a 1 GiB threshold: %+v, want memory reserved and none used", u)
	}
	must(t, p.Trim(0))
	if u, err = p.Usage(); err != nil || u.Reserved != 0 {
		t.Fatalf("after Trim(0): %+v, %v", u, err)
	}
}
