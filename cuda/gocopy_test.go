package cuda

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
)

// usesFake reports whether the tests run on the fake driver, whose race
// detector and object counts some checks read.
func usesFake() bool { return cudatest.Active() }

// noRaces fails t with the races the fake's detector found since the last
// look; with a real driver it checks nothing.
func noRaces(t *testing.T, what string) {
	t.Helper()
	if !usesFake() {
		return
	}
	for _, r := range cudatest.TakeRaces() {
		t.Errorf("%s: race: %s", what, r.Summary())
	}
}

// TestGoSliceCopiesOnAStream: CopyFromHost returns once its source is
// read (changing the Go slice afterwards changes nothing on the device),
// CopyToHost once its destination holds the data, both in the stream's
// order, for sizes of one element, a few KiB and several staging chunks.
func TestGoSliceCopiesOnAStream(t *testing.T) {
	_, ctx := needGPU(t)
	_, k := vectorAdd(t, ctx)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	noRaces(t, "before")
	// Sizes: one element, a few KiB, two staged chunks, and a copy out
	// large enough for the driver's pageable path (pageableOutMin).
	for _, n := range []int{1, 1000, stagingChunk/4 + 333, pageableOutMin/4 + 333} {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = float32(i%1000), float32(2*(i%7))
		}
		want := make([]float32, n)
		for i := range want {
			want[i] = a[i] + b[i]
		}
		x, err := AllocSliceFrom(s, a)
		must(t, err)
		clear(a) // read already: the device keeps the old values
		y, err := AllocSlice[float32](s, n)
		must(t, err)
		must(t, y.CopyFromHost(s, b))
		b[0] = -1
		z, err := AllocSlice[float32](s, n)
		must(t, err)
		must(t, k.Launch(s, Linear(n, 128), x, y, z, uint32(n)))
		got := make([]float32, n)
		must(t, z.CopyToHost(s, got))
		if !slices.Equal(got, want) {
			i := firstDiff(got, want)
			t.Fatalf("n=%d: element %d is %v after CopyToHost, want %v", n, i, got[i], want[i])
		}
		// The synchronous copy of memory made on s waits for s: no
		// Synchronize between the launch and it.
		must(t, k.Launch(s, Linear(n, 128), z, y, x, uint32(n)))
		clear(got)
		must(t, x.CopyTo(got))
		for i := range got {
			if w := want[i] + float32(2*(i%7)); got[i] != w {
				t.Fatalf("n=%d: element %d is %v after CopyTo, want %v", n, i, got[i], w)
			}
		}
		for _, m := range []*Slice[float32]{x, y, z} {
			must(t, m.Close())
		}
		noRaces(t, "stream-ordered copies")
	}
}

func firstDiff[T comparable](a, b []T) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return len(a)
}

// TestSyncCopyOfContextMemoryWaitsForTheContext: memory made in a context
// has no stream of its own, so its synchronous copies wait for all of the
// context's work, and a kernel still running on a stream is never read
// stale.
func TestSyncCopyOfContextMemoryWaitsForTheContext(t *testing.T) {
	_, ctx := needGPU(t)
	_, k := vectorAdd(t, ctx)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	noRaces(t, "before")
	const n = 5000
	a := make([]float32, n)
	for i := range a {
		a[i] = float32(i)
	}
	x, err := AllocSliceFrom(ctx, a)
	must(t, err)
	defer x.Close()
	z, err := AllocSlice[float32](ctx, n)
	must(t, err)
	defer z.Close()
	must(t, k.Launch(s, Linear(n, 256), x, x, z, uint32(n)))
	got := make([]float32, n)
	must(t, z.CopyTo(got))
	for i := range got {
		if got[i] != 2*a[i] {
			t.Fatalf("element %d is %v, want %v", i, got[i], 2*a[i])
		}
	}
	must(t, k.Launch(s, Linear(n, 256), x, x, z, uint32(n)))
	must(t, z.Fill(7)) // waits for the launch before it overwrites
	must(t, z.CopyTo(got))
	if got[0] != 7 || got[n-1] != 7 {
		t.Fatalf("after Fill: %v, %v", got[0], got[n-1])
	}
	noRaces(t, "synchronous copies of context memory")
}

// TestGoSliceCopyChecks: a copy that does not fit, a closed or nil end,
// and a stream of another context are errors before the driver.
func TestGoSliceCopyChecks(t *testing.T) {
	dev, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	x, err := AllocSlice[int32](s, 4)
	must(t, err)
	defer x.Close()
	if err := x.CopyFromHost(s, make([]int32, 5)); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) || !strings.Contains(err.Error(), "5 elements into a slice of 4") {
		t.Errorf("CopyFromHost of 5 into 4 = %v", err)
	}
	if err := x.CopyToHost(s, make([]int32, 5)); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("CopyToHost of 5 from 4 = %v", err)
	}
	if err := x.CopyToHost(nil, make([]int32, 1)); !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "nil") {
		t.Errorf("CopyToHost on a nil stream = %v, want ErrClosed saying nil", err)
	}
	var none *Slice[int32]
	if err := none.CopyFromHost(s, []int32{1}); !errors.Is(err, ErrClosed) {
		t.Errorf("CopyFromHost into a nil slice = %v", err)
	}
	other, err := NewContext(dev)
	must(t, err)
	defer other.Close()
	os, err := NewStream(other)
	must(t, err)
	defer os.Close()
	if err := x.CopyFromHost(os, []int32{1}); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) || !strings.Contains(err.Error(), "another context") {
		t.Errorf("CopyFromHost on a stream of another context = %v", err)
	}
}

// TestZeroLengthsAreEmpty: empty allocations, copies and fills succeed
// without allocating anything in the driver.
func TestZeroLengthsAreEmpty(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	var before cudatest.Counts
	if usesFake() {
		before = cudatest.Live()
	}
	objects := LiveObjects()
	for _, on := range []Allocator{ctx, s} {
		x, err := AllocSlice[float64](on, 0)
		must(t, err)
		y, err := AllocSliceFrom(on, []float64{})
		must(t, err)
		if x.Len() != 0 || x.Ptr() != 0 || x.Context() == nil || x.Context().Raw() != ctx.Raw() {
			t.Errorf("empty slice: len %d, ptr %#x", x.Len(), x.Ptr())
		}
		must(t, x.CopyFrom(nil))
		must(t, x.CopyTo(nil))
		must(t, x.CopyFromHost(s, nil))
		must(t, x.CopyToHost(s, []float64{}))
		must(t, x.Fill(1))
		must(t, x.FillAsync(s, 1))
		must(t, CopySlice(y, x))
		must(t, CopySliceAsync(s, y, x))
		sub, err := x.Sub(0, 0)
		must(t, err)
		must(t, sub.Close())
		must(t, x.Close())
		must(t, y.Close())
	}
	m, err := Alloc(ctx, 0)
	must(t, err)
	must(t, m.MemsetD32(1))
	must(t, CopyToDevice(m, []byte{}))
	must(t, m.Close())
	am, err := AllocAsync(s, 0)
	must(t, err)
	must(t, am.Close())
	h, err := AllocHost[float32](ctx, 0)
	must(t, err)
	if h.Len() != 0 || len(h.Slice()) != 0 {
		t.Errorf("empty host buffer of %d elements", h.Len())
	}
	must(t, h.Close())
	r, err := RegisterHost[float32](ctx, nil)
	must(t, err)
	must(t, r.Close())
	if got := LiveObjects(); got != objects {
		t.Errorf("live objects %+v after closing the empty ones, want %+v", got, objects)
	}
	if usesFake() {
		if got := cudatest.Live(); got.DeviceAllocs != before.DeviceAllocs || got.HostAllocs != before.HostAllocs {
			t.Errorf("the fake driver's objects went from %+v to %+v", before, got)
		}
	}
}

// TestContextOfAClosedObjectNamesIt: the Context of a closed stream (or
// memory) is a closed handle whose errors say whose it was, not nil, so
// that a call on it blames the right Close.
func TestContextOfAClosedObjectNamesIt(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	must(t, s.Close())
	_, err = AllocHost[float32](s.Context(), 4)
	if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "the context of a closed stream") {
		t.Errorf("AllocHost on a closed stream's Context = %v, want ErrClosed naming the stream", err)
	}
	m, err := AllocSlice[float32](ctx, 1)
	must(t, err)
	must(t, m.Close())
	if _, err := NewStream(m.Context()); !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "closed memory") {
		t.Errorf("NewStream on a closed slice's Context = %v", err)
	}
	var none *Stream
	if _, err := AllocSlice[float32](none.Context(), 1); !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "nil") {
		t.Errorf("AllocSlice on a nil stream's Context = %v, want ErrClosed saying nil", err)
	}
	if _, err := AllocSlice[float32](nil, 1); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("AllocSlice(nil) = %v", err)
	}
}

// TestFillWideElements: complex64 and complex128 elements (8 and 16
// bytes) fill as one memset when their words repeat, and as columns
// otherwise.
func TestFillWideElements(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	for _, v := range []complex128{0, complex(1, 1), complex(1.5, -2.25)} {
		x, err := AllocSlice[complex128](s, 37)
		must(t, err)
		must(t, x.Fill(v))
		got := make([]complex128, 37)
		must(t, x.CopyTo(got))
		for i, g := range got {
			if g != v {
				t.Fatalf("Fill(%v): element %d is %v", v, i, g)
			}
		}
		must(t, x.FillAsync(s, -v))
		must(t, x.CopyToHost(s, got))
		if got[36] != -v {
			t.Fatalf("FillAsync(%v): %v", -v, got[36])
		}
		must(t, x.Close())
	}
	y, err := AllocSlice[complex64](ctx, 9)
	must(t, err)
	defer y.Close()
	must(t, y.Fill(complex(3, 4)))
	got := make([]complex64, 9)
	must(t, y.CopyTo(got))
	if got[8] != complex(3, 4) {
		t.Fatalf("complex64 Fill: %v", got[8])
	}
	if f := fillPlan(complex(1.5, -2.25), 3); f.width != 16 || f.count != 3 || len(f.words()) != 4 {
		t.Errorf("fillPlan of a 16-byte value with distinct halves = %+v", f)
	}
	if f := fillPlan(complex(2.0, 2.0), 3); f.width != 8 || f.count != 6 || f.hi != 0x40000000 {
		t.Errorf("fillPlan of a 16-byte value of two equal float64 = %+v, want the 8-byte plan of 2.0 for 6 elements", f)
	}
}

// TestStreamIDMatchesRaceReport: the stream numbers of a race report are
// the streams' IDs, so a report can be matched to the program's streams.
func TestStreamIDMatchesRaceReport(t *testing.T) {
	if !usesFake() {
		t.Skip("the race detector is the fake driver's: this run uses a real one")
	}
	_, ctx := needGPU(t)
	noRaces(t, "before")
	s1, err := NewStream(ctx)
	must(t, err)
	defer s1.Close()
	s2, err := NewStream(ctx)
	must(t, err)
	defer s2.Close()
	id1, err := s1.ID()
	if errors.Is(err, ErrMissingFunction) {
		t.Skipf("Stream.ID: %v", err)
	}
	must(t, err)
	id2, err := s2.ID()
	must(t, err)
	if id1 == id2 || id1 == 0 {
		t.Fatalf("stream IDs %d and %d", id1, id2)
	}
	if c, err := s1.Clone(); err != nil {
		t.Fatal(err)
	} else if id, err := c.ID(); err != nil || id != id1 {
		t.Errorf("a clone's ID = %d, %v; want %d", id, err, id1)
	} else {
		must(t, c.Close())
	}
	x, err := AllocSlice[uint32](ctx, 64)
	must(t, err)
	defer x.Close()
	must(t, x.FillAsync(s1, 1))
	must(t, x.FillAsync(s2, 2)) // unordered with the first: a race
	must(t, s1.Synchronize())
	must(t, s2.Synchronize())
	races := cudatest.TakeRaces()
	if len(races) != 1 {
		t.Fatalf("%d races, want 1", len(races))
	}
	got := []uint64{races[0].Access.Stream, races[0].Previous.Stream}
	slices.Sort(got)
	want := []uint64{min(id1, id2), max(id1, id2)}
	if !slices.Equal(got, want) {
		t.Errorf("race between streams %v, want the IDs %v", got, want)
	}
	var closed *Stream
	if _, err := closed.ID(); !errors.Is(err, ErrClosed) {
		t.Errorf("ID of a nil stream = %v", err)
	}
}

// TestOutOfMemoryNamesSizeAndFree: an allocation the device cannot meet
// says what was asked and what is free, and still matches the driver's
// result.
func TestOutOfMemoryNamesSizeAndFree(t *testing.T) {
	dev, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	total, err := dev.TotalMemory()
	must(t, err)
	huge := int(total) * 4
	for _, on := range []Allocator{ctx, s} {
		x, err := AllocSlice[byte](on, huge)
		if err == nil {
			x.Close()
			t.Fatalf("AllocSlice of %d bytes, four times the device's memory, succeeded", huge)
		}
		msg := err.Error()
		if !errors.Is(err, cu.CUDA_ERROR_OUT_OF_MEMORY) || !strings.Contains(msg, fmt.Sprintf("%d bytes", huge)) || !strings.Contains(msg, "free of the device's") {
			t.Errorf("AllocSlice(%T) of %d bytes = %v; want CUDA_ERROR_OUT_OF_MEMORY naming the size and the free memory", on, huge, err)
		}
		t.Logf("%T: %v", on, err)
	}
}
