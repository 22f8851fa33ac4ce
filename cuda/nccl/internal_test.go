//go:build linux && (amd64 || arm64)

package nccl

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/generated/nccl"
	"github.com/gocuda/gocuda/internal/fakenccl"
)

// TestMain runs against the real driver where there is one, else against
// the fake driver (two devices) and, unless GOCUDA_LIBNCCL names a library,
// the fake NCCL (internal/fakenccl), which runs the collectives in this
// process on the fake devices' host memory. The fake NCCL is never used
// with a real driver: there, the tests that need NCCL skip without it,
// unless GOCUDA_TEST_LIBS=required.
func TestMain(m *testing.M) {
	if os.Getenv("FAKECUDA_DEVICES") == "" {
		os.Setenv("FAKECUDA_DEVICES", "2")
	}
	if cudatest.SetupIfNoDriver() && os.Getenv(nccl.LibraryEnv) == "" {
		if _, err := fakenccl.Setup(); err != nil {
			fmt.Fprintln(os.Stderr, "the fake NCCL cannot be built, the tests that need NCCL skip:", err)
		}
	}
	os.Exit(m.Run())
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// stream returns a stream of the primary context of device dev, skipping
// without a driver or such a device.
func stream(t *testing.T, dev int) *cuda.Stream {
	t.Helper()
	n, err := cuda.DeviceCount()
	if err != nil {
		libtest.Unavailable(t, "no CUDA driver: %v", err)
	}
	if n <= dev {
		libtest.Unavailable(t, "%d CUDA device(s): the test needs %d", n, dev+1)
	}
	d, err := cuda.GetDevice(dev)
	must(t, err)
	ctx, err := cuda.PrimaryContext(d)
	must(t, err)
	t.Cleanup(func() { must(t, ctx.Close()) })
	s, err := cuda.NewStream(ctx)
	must(t, err)
	t.Cleanup(func() { must(t, s.Close()) })
	return s
}

// fakeComm is a Comm of nranks ranks around a handle NCCL never sees: the
// checks before NCCL are what is tested with it.
func fakeComm(t *testing.T, s *cuda.Stream, rank, nranks int) *Comm {
	t.Helper()
	sh := &commShared{rank: rank, nranks: nranks, ctx: s.Context().Raw(), device: s.Context().Device().Ordinal()}
	o, err := cuda.NewLibraryObject(s, func() (nccl.NcclComm_t, error) { return 1, nil }, func(nccl.NcclComm_t) error { return nil })
	must(t, err)
	c := &Comm{o: o, sh: sh}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestDataTypes(t *testing.T) {
	for _, c := range []struct {
		got, want nccl.NcclDataType_t
	}{
		{dataType[int8](), nccl.NcclInt8}, {dataType[uint8](), nccl.NcclUint8},
		{dataType[int32](), nccl.NcclInt32}, {dataType[uint32](), nccl.NcclUint32},
		{dataType[int64](), nccl.NcclInt64}, {dataType[uint64](), nccl.NcclUint64},
		{dataType[float32](), nccl.NcclFloat32}, {dataType[float64](), nccl.NcclFloat64},
		{dataType[cuda.Float16](), nccl.NcclFloat16}, {dataType[cuda.BFloat16](), 9},
		{dataType[cuda.Float8E4M3](), 10}, {dataType[cuda.Float8E5M2](), 11},
	} {
		if c.got != c.want {
			t.Errorf("data type %v, want %v", c.got, c.want)
		}
	}
	if Op(nccl.NcclAvg) != Avg || Sum.String() != "Sum" || Op(7).valid() || Op(-1).valid() {
		t.Error("the reductions are not NCCL's")
	}
}

func TestUniqueIDBytes(t *testing.T) {
	var id UniqueID
	for i := range id {
		id[i] = byte(i * 7)
	}
	b, err := id.MarshalBinary()
	must(t, err)
	var back UniqueID
	must(t, back.UnmarshalBinary(b))
	if back != id || len(b) != 128 {
		t.Errorf("round trip gave %v", back)
	}
	if err := back.UnmarshalBinary(b[:127]); err == nil {
		t.Error("127 bytes accepted as a unique id")
	}
	if len(id.String()) != 256 {
		t.Errorf("String is %d characters", len(id.String()))
	}
}

// invalidArg reports whether err is a refusal before NCCL.
func wantInvalid(t *testing.T, what string, err error) {
	t.Helper()
	var e *Error
	if !errors.Is(err, nccl.NcclInvalidArgument) || !errors.As(err, &e) || e.Pkg != "nccl" {
		t.Errorf("%s: %v, want an *Error matching ncclInvalidArgument", what, err)
	}
}

func wantClosed(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("%s: %v, want an error matching cuda.ErrClosed", what, err)
	}
}

// TestShapeChecks: lengths, counts per rank, roots, peers, reductions and
// contexts are refused before NCCL, on any driver.
func TestShapeChecks(t *testing.T) {
	s := stream(t, 0)
	c := fakeComm(t, s, 1, 4)
	ctx := s.Context()
	alloc := func(n int) *cuda.Slice[float32] {
		x, err := cuda.AllocSlice[float32](ctx, n)
		must(t, err)
		t.Cleanup(func() { x.Close() })
		return x
	}
	a8, b8, a6, a32, a2 := alloc(8), alloc(8), alloc(6), alloc(32), alloc(2)
	wantInvalid(t, "AllReduce of 8 into 6", AllReduce(c, a8, a6, Sum))
	wantInvalid(t, "AllReduce with an unknown op", AllReduce(c, a8, b8, Op(9)))
	wantInvalid(t, "AllGather of 8 into 8 on 4 ranks", AllGather(c, a8, b8))
	wantInvalid(t, "AllGather of 8 into 6", AllGather(c, a8, a6))
	wantInvalid(t, "ReduceScatter of 8 into 8 on 4 ranks", ReduceScatter(c, a8, b8, Sum))
	wantInvalid(t, "ReduceScatter of 6 into 2", ReduceScatter(c, a6, a2, Max))
	wantInvalid(t, "ReduceScatter with an unknown op", ReduceScatter(c, a8, a2, Op(-1)))
	wantInvalid(t, "Broadcast from root 4 of 4", Broadcast(c, a8, b8, 4))
	wantInvalid(t, "Broadcast from root -1", Broadcast(c, a8, b8, -1))
	wantInvalid(t, "Broadcast of 8 into 6 on the root", Broadcast(c, a8, a6, 1))
	wantInvalid(t, "Reduce to root 9", Reduce(c, a8, b8, Sum, 9))
	wantInvalid(t, "Reduce of 8 into 6", Reduce(c, a8, a6, Sum, 0))
	wantInvalid(t, "Reduce with an unknown op", Reduce(c, a8, b8, Op(5), 0))
	wantInvalid(t, "Send to peer 4", Send(c, a8, 4))
	wantInvalid(t, "Recv from peer -2", Recv(c, a8, -2))
	_ = a32

	// Memory of another context (device 1, or a context of its own).
	var other *cuda.Context
	if n, _ := cuda.DeviceCount(); n > 1 {
		d1, err := cuda.GetDevice(1)
		must(t, err)
		other, err = cuda.PrimaryContext(d1)
		must(t, err)
	} else {
		d0, err := cuda.GetDevice(0)
		must(t, err)
		other, err = cuda.NewContext(d0)
		must(t, err)
	}
	defer other.Close()
	elsewhere, err := cuda.AllocSlice[float32](other, 8)
	must(t, err)
	defer elsewhere.Close()
	wantInvalid(t, "AllReduce into memory of another context", AllReduce(c, a8, elsewhere, Sum))
	if err := AllReduce(c, elsewhere, a8, Sum); err == nil || !strings.Contains(err.Error(), "another context") {
		t.Errorf("AllReduce from memory of another context: %v", err)
	}

	// Nil and closed slices.
	closed := alloc(8)
	must(t, closed.Close())
	wantClosed(t, "AllReduce of a nil slice", AllReduce(c, nil, a8, Sum))
	wantClosed(t, "AllReduce into a closed slice", AllReduce(c, a8, closed, Sum))
	wantClosed(t, "Send of nil", Send[float32](c, nil, 0))
	wantClosed(t, "Broadcast into nil off the root", Broadcast[float32](c, nil, nil, 0))
	wantClosed(t, "Reduce of nil", Reduce(c, nil, a8, Sum, 1))

	// Nil, zero and closed communicators.
	for what, comm := range map[string]*Comm{"nil": nil, "zero": {}} {
		wantClosed(t, what+" AllReduce", AllReduce(comm, a8, b8, Sum))
		wantClosed(t, what+" AllGather", AllGather(comm, a8, a32))
		wantClosed(t, what+" Recv", Recv(comm, a8, 0))
		wantClosed(t, what+" Close", comm.Close())
		wantClosed(t, what+" Abort", comm.Abort())
		wantClosed(t, what+" Clone", func() error { _, err := comm.Clone(); return err }())
		if comm.Rank() != 0 || comm.Size() != 0 || comm.Stream() != nil {
			t.Errorf("%s communicator has rank %d, size %d, stream %v", what, comm.Rank(), comm.Size(), comm.Stream())
		}
	}
	c2, err := c.Clone()
	must(t, err)
	if c2.Rank() != 1 || c2.Size() != 4 || c2.Device() != 0 || !c2.Stream().IsSameQueue(s) {
		t.Errorf("clone: rank %d of %d on device %d", c2.Rank(), c2.Size(), c2.Device())
	}
	must(t, c2.Close())
	wantClosed(t, "AllReduce on a closed clone", AllReduce(c2, a8, b8, Sum))
	must(t, c2.Close()) // closing again is nil, as for every handle
	// The original handle still passes the checks (and would reach NCCL).
	wantInvalid(t, "AllReduce on the original after a clone's Close", AllReduce(c, a8, a6, Sum))
}

// TestStreamMustBePrimary: NCCL works in the primary contexts; a stream of
// a context of its own is refused before NCCL.
func TestStreamMustBePrimary(t *testing.T) {
	if n, err := cuda.DeviceCount(); err != nil || n == 0 {
		libtest.Unavailable(t, "no CUDA device: %v", err)
	}
	d0, err := cuda.GetDevice(0)
	must(t, err)
	ctx, err := cuda.NewContext(d0)
	must(t, err)
	defer ctx.Close()
	s, err := cuda.NewStream(ctx)
	must(t, err)
	defer s.Close()
	if _, err := InitAll([]*cuda.Stream{s}); !errors.Is(err, nccl.NcclInvalidArgument) || !strings.Contains(err.Error(), "primary") {
		t.Errorf("InitAll on a non-primary context: %v", err)
	}
	if _, err := InitRank(t.Context(), s, UniqueID{}, 2, 0); !errors.Is(err, nccl.NcclInvalidArgument) {
		t.Errorf("InitRank on a non-primary context: %v", err)
	}
	p := stream(t, 0)
	if _, err := InitAll([]*cuda.Stream{p, p}); !errors.Is(err, nccl.NcclInvalidArgument) {
		t.Errorf("InitAll with two streams of one device: %v", err)
	}
	for _, r := range [][2]int{{2, 2}, {2, -1}, {0, 0}} {
		if _, err := InitRank(t.Context(), p, UniqueID{}, r[0], r[1]); !errors.Is(err, nccl.NcclInvalidArgument) {
			t.Errorf("InitRank of rank %d of %d: %v", r[1], r[0], err)
		}
	}
	if _, err := InitAll(nil); !errors.Is(err, nccl.NcclInvalidArgument) {
		t.Errorf("InitAll(nil): %v", err)
	}
	var closed *cuda.Stream
	if _, err := InitAll([]*cuda.Stream{closed}); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("InitAll with a nil stream: %v", err)
	}
}

// TestErrorCarriesStatusAndText: an error of NCCL matches its status and
// says which call failed.
func TestErrorCarriesStatusAndText(t *testing.T) {
	err := ncclError("AllReduce", "ncclAllReduce", nccl.NcclInvalidUsage, 0)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, nccl.NcclInvalidUsage) || errors.Is(err, nccl.NcclSystemError) {
		t.Fatalf("%v: not an *Error matching ncclInvalidUsage only", err)
	}
	if !strings.HasPrefix(err.Error(), "nccl: AllReduce: ncclAllReduce: ncclInvalidUsage (5)") {
		t.Errorf("message %q", err)
	}
	if ncclError("x", "y", nil, 0) != nil {
		t.Error("no error made an error")
	}
}

// TestWithoutLibrary: with no NCCL, the package's calls fail with the raw
// package's ErrNoLibrary (in a child process: the library loads once).
func TestWithoutLibrary(t *testing.T) {
	if os.Getenv("GOCUDA_NCCL_SAFE_CHILD") != "" {
		_, err := NewUniqueID()
		if !errors.Is(err, nccl.ErrNoLibrary) || !strings.HasPrefix(err.Error(), "nccl: NewUniqueID: ncclGetUniqueId: ") {
			t.Fatalf("NewUniqueID without NCCL: %v", err)
		}
		if _, err := Version(); !errors.Is(err, nccl.ErrNoLibrary) {
			t.Fatalf("Version without NCCL: %v", err)
		}
		return
	}
	runChild(t, "TestWithoutLibrary", "GOCUDA_NCCL_SAFE_CHILD=1", nccl.LibraryEnv+"=/nonexistent/libnccl.so.2")
}

// The non-blocking config is NCCL_CONFIG_INITIALIZER for whichever header
// the bindings come from: every int field "undefined" but blocking, which
// NCCL checks (2.28 refuses a zero nvlsCTAs).
func TestNonBlockingConfigLeavesFieldsUndefined(t *testing.T) {
	c := nonBlockingConfig()
	if c.Size != uint64(unsafe.Sizeof(c)) || c.Magic != 0xcafebeef || c.Version != uint32(nccl.HeaderVersion()) || c.Blocking != 0 {
		t.Errorf("size %d, magic %#x, version %d, blocking %d", c.Size, c.Magic, c.Version, c.Blocking)
	}
	v := reflect.ValueOf(c)
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		if f.Kind() == reflect.Int32 && name != "Blocking" && f.Int() != nccl.NCCL_CONFIG_UNDEF_INT {
			t.Errorf("%s = %d, want NCCL_CONFIG_UNDEF_INT", name, f.Int())
		}
		if f.Kind() == reflect.Pointer && !f.IsNil() {
			t.Errorf("%s is set, want nil", name)
		}
	}
}
