//go:build linux && (amd64 || arm64)

package fakenccl_test

// What package cuda/nccl's tests do not reach: an abort releases the host
// functions that wait for a peer, on both sides; disagreeing ranks get
// ncclInvalidUsage; blocking inits meet; the checks of handles, devices
// and groups; FP8 refused before 2.24, and its rounding on encodings
// worked out by hand. The collectives' results are cuda/nccl's tests.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/nccl"
	"github.com/gocuda/gocuda/internal/fakecuda"
	"github.com/gocuda/gocuda/internal/fakenccl"
)

func TestMain(m *testing.M) {
	os.Setenv("FAKECUDA_DEVICES", "2")
	if _, err := cudatest.Setup(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if _, err := fakenccl.Setup(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// streams returns a stream of each device's primary context.
func streams(t *testing.T) []*cuda.Stream {
	t.Helper()
	var ss []*cuda.Stream
	for i := range 2 {
		d, err := cuda.GetDevice(i)
		must(t, err)
		ctx, err := cuda.PrimaryContext(d)
		must(t, err)
		t.Cleanup(func() { must(t, ctx.Close()) })
		s, err := cuda.NewStream(ctx)
		must(t, err)
		t.Cleanup(func() { must(t, s.Close()) })
		ss = append(ss, s)
	}
	return ss
}

// buffers returns a slice of n float32 on each stream's context.
func buffers(t *testing.T, ss []*cuda.Stream, n int) []*cuda.Slice[float32] {
	t.Helper()
	var xs []*cuda.Slice[float32]
	for _, s := range ss {
		x, err := cuda.AllocSlice[float32](s.Context(), n)
		must(t, err)
		t.Cleanup(func() { x.Close() })
		xs = append(xs, x)
	}
	return xs
}

func initAll(t *testing.T) []nccl.NcclComm_t {
	t.Helper()
	cs := make([]nccl.NcclComm_t, 2)
	devs := []int32{0, 1}
	must(t, nccl.CommInitAll(&cs[0], 2, &devs[0]))
	return cs
}

// dptr is a device address as the bindings take it; never a Go pointer.
func dptr(x *cuda.Slice[float32]) unsafe.Pointer {
	p := x.Ptr()
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}

func raw(s *cuda.Stream) cu.CUstream { return s.Raw() }

// busy checks that s has not finished its work after a while: a host
// function waits for a peer.
func busy(t *testing.T, s *cuda.Stream) {
	t.Helper()
	time.Sleep(50 * time.Millisecond)
	idle, err := s.Query()
	must(t, err)
	if idle {
		t.Fatal("the stream finished a collective whose peer never came")
	}
}

func idle(t *testing.T, s *cuda.Stream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	must(t, s.WaitIdle(ctx))
}

func asyncError(t *testing.T, c nccl.NcclComm_t) nccl.NcclResult_t {
	t.Helper()
	var r nccl.NcclResult_t
	must(t, nccl.CommGetAsyncError(c, &r))
	return r
}

func lastError(c nccl.NcclComm_t) string {
	p, err := nccl.GetLastError(c)
	if err != nil || p == nil {
		return ""
	}
	var b []byte
	for i := 0; i < 4096; i++ {
		ch := *(*byte)(unsafe.Add(unsafe.Pointer(p), i))
		if ch == 0 {
			break
		}
		b = append(b, ch)
	}
	return string(b)
}

func TestVersionAndIs(t *testing.T) {
	var v int32
	must(t, nccl.GetVersion(&v))
	if int(v) != nccl.HeaderVersion() {
		t.Errorf("ncclGetVersion says %d, want the bindings' %d", v, nccl.HeaderVersion())
	}
	if !fakenccl.Active() || !fakenccl.Is(nccl.LibraryPath()) {
		t.Errorf("%s is not recognized as the fake NCCL", nccl.LibraryPath())
	}
	if fakenccl.Is(os.Getenv(cu.LibraryEnv)) || fakenccl.Is("/nonexistent/libnccl.so.2") || fakenccl.Is("") {
		t.Error("another library is taken for the fake NCCL")
	}
}

// TestAbortReleasesWaiters: a collective or a send whose peer never comes
// keeps its stream busy until the peer is aborted (the waiting rank then
// has ncclRemoteError) or the waiting rank itself is.
func TestAbortReleasesWaiters(t *testing.T) {
	ss := streams(t)
	xs := buffers(t, ss, 4)
	for _, what := range []string{"AllReduce", "Send"} {
		for _, abortSelf := range []bool{false, true} {
			cs := initAll(t)
			if what == "Send" {
				must(t, nccl.Send(dptr(xs[0]), 4, nccl.NcclFloat32, 1, cs[0], raw(ss[0])))
			} else {
				must(t, nccl.AllReduce(dptr(xs[0]), dptr(xs[0]), 4, nccl.NcclFloat32, nccl.NcclSum, cs[0], raw(ss[0])))
			}
			busy(t, ss[0])
			if abortSelf {
				must(t, nccl.CommAbort(cs[0]))
				idle(t, ss[0])
				must(t, nccl.CommDestroy(cs[1]))
				continue
			}
			must(t, nccl.CommAbort(cs[1]))
			idle(t, ss[0])
			if r := asyncError(t, cs[0]); r != nccl.NcclRemoteError {
				t.Errorf("%s: rank 0's async error is %v after its peer's abort, want ncclRemoteError", what, r)
			}
			if text := lastError(cs[0]); !strings.Contains(text, "rank 1 will never") {
				t.Errorf("%s: last error %q", what, text)
			}
			must(t, nccl.CommDestroy(cs[0]))
			// A destroyed communicator is refused, not followed.
			if err := nccl.CommDestroy(cs[0]); !errors.Is(err, nccl.NcclInvalidArgument) {
				t.Errorf("%s: destroying twice: %v", what, err)
			}
		}
	}
}

// TestDisagreeingRanks: ranks that call different collectives get
// ncclInvalidUsage and their streams go on.
func TestDisagreeingRanks(t *testing.T) {
	ss := streams(t)
	xs := buffers(t, ss, 8)
	cs := initAll(t)
	must(t, nccl.AllReduce(dptr(xs[0]), dptr(xs[0]), 4, nccl.NcclFloat32, nccl.NcclSum, cs[0], raw(ss[0])))
	must(t, nccl.AllReduce(dptr(xs[1]), dptr(xs[1]), 8, nccl.NcclFloat32, nccl.NcclSum, cs[1], raw(ss[1])))
	for i, s := range ss {
		idle(t, s)
		if r := asyncError(t, cs[i]); r != nccl.NcclInvalidUsage {
			t.Errorf("rank %d: async error %v, want ncclInvalidUsage", i, r)
		}
	}
	if text := lastError(cs[0]); !strings.Contains(text, "rank 1 ncclAllReduce (count 8") {
		t.Errorf("last error %q", text)
	}
	for _, c := range cs {
		must(t, nccl.CommDestroy(c))
	}
}

// TestInitRank: blocking inits of two ranks meet, each on its current
// context's device; a second rank on the same device is refused.
func TestInitRank(t *testing.T) {
	ss := streams(t)
	var id nccl.NcclUniqueId
	must(t, nccl.GetUniqueId(&id))
	cs := make([]nccl.NcclComm_t, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, s := range ss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Context().Do(func() error { return nccl.CommInitRank(&cs[i], 2, id, int32(i)) })
		}()
	}
	wg.Wait()
	for i, c := range cs {
		must(t, errs[i])
		var n, dev, rank int32
		must(t, nccl.CommCount(c, &n))
		must(t, nccl.CommCuDevice(c, &dev))
		must(t, nccl.CommUserRank(c, &rank))
		if n != 2 || dev != int32(i) || rank != int32(i) {
			t.Errorf("rank %d: %d ranks, device %d, rank %d", i, n, dev, rank)
		}
		must(t, nccl.CommFinalize(c))
		must(t, nccl.CommDestroy(c))
	}

	must(t, nccl.GetUniqueId(&id))
	cfg := nccl.NcclConfig_t{Magic: 0xcafebeef, Version: uint32(nccl.HeaderVersion()), Blocking: 0}
	cfg.Size = uint64(unsafe.Sizeof(cfg))
	var c0, c1 nccl.NcclComm_t
	err := ss[0].Context().Do(func() error { return nccl.CommInitRankConfig(&c0, 2, id, 0, &cfg) })
	if !errors.Is(err, nccl.NcclInProgress) {
		t.Fatalf("non-blocking init of rank 0 of 2: %v, want ncclInProgress", err)
	}
	if r := asyncError(t, c0); r != nccl.NcclInProgress {
		t.Errorf("async error %v before the peer joins, want ncclInProgress", r)
	}
	err = ss[0].Context().Do(func() error { return nccl.CommInitRankConfig(&c1, 2, id, 1, &cfg) })
	if !errors.Is(err, nccl.NcclInvalidUsage) || !strings.Contains(lastError(0), "Duplicate GPU") {
		t.Errorf("rank 1 on rank 0's device: %v (%s), want ncclInvalidUsage", err, lastError(0))
	}
	must(t, nccl.CommAbort(c0))
}

func TestGroups(t *testing.T) {
	if err := nccl.GroupEnd(); !errors.Is(err, nccl.NcclInvalidUsage) {
		t.Errorf("ncclGroupEnd without a start: %v", err)
	}
	ss := streams(t)
	xs := buffers(t, ss, 4)
	cs := initAll(t)
	// Nested groups end at the outermost ncclGroupEnd: until then nothing
	// is queued, so one goroutine can drive both ranks. A group is the
	// thread's.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	must(t, nccl.GroupStart())
	must(t, nccl.GroupStart())
	for i, c := range cs {
		must(t, nccl.AllReduce(dptr(xs[i]), dptr(xs[i]), 4, nccl.NcclFloat32, nccl.NcclMax, c, raw(ss[i])))
	}
	must(t, nccl.GroupEnd())
	for _, s := range ss {
		if idle, err := s.Query(); err != nil || !idle {
			t.Errorf("work queued inside a nested group: idle %v, %v", idle, err)
		}
	}
	must(t, nccl.GroupEnd())
	for i, s := range ss {
		idle(t, s)
		if r := asyncError(t, cs[i]); r != nccl.NcclSuccess {
			t.Errorf("rank %d: %v", i, r)
		}
		must(t, nccl.CommDestroy(cs[i]))
	}
}

// TestSeededScheduler: under the fake driver's seeded scheduler
// (FAKECUDA_SEED), where host functions run outside the turns, the ranks'
// host functions still meet: the turn never goes back to a stream whose
// worker waits in one. Each seed runs in a child process (the driver
// reads the seed when it loads).
func TestSeededScheduler(t *testing.T) {
	if os.Getenv(fakecuda.SeedEnv) != "" {
		allReduceBoth(t)
		return
	}
	for seed := 1; seed <= 4; seed++ {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSeededScheduler$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", fakecuda.SeedEnv, seed), fakecuda.QuickRaceExit())
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestSeededScheduler") {
			t.Errorf("seed %d: %v\n%s", seed, err, out)
		}
	}
}

// allReduceBoth all-reduces on both ranks from one goroutine, in a group.
func allReduceBoth(t *testing.T) {
	ss := streams(t)
	var xs []*cuda.Slice[float32]
	for i, s := range ss {
		f := float32(1 + 9*i)
		x, err := cuda.AllocSliceFrom(s.Context(), []float32{f, 2 * f, 3 * f, 4 * f})
		must(t, err)
		t.Cleanup(func() { x.Close() })
		xs = append(xs, x)
	}
	cs := initAll(t)
	runtime.LockOSThread()
	must(t, nccl.GroupStart())
	for i, c := range cs {
		must(t, nccl.AllReduce(dptr(xs[i]), dptr(xs[i]), 4, nccl.NcclFloat32, nccl.NcclSum, c, raw(ss[i])))
	}
	must(t, nccl.GroupEnd())
	runtime.UnlockOSThread()
	for i, s := range ss {
		must(t, s.Synchronize())
		got := make([]float32, 4)
		must(t, xs[i].CopyTo(got))
		if got[0] != 11 || got[1] != 22 || got[2] != 33 || got[3] != 44 {
			t.Errorf("rank %d: %v, want [11 22 33 44]", i, got)
		}
		must(t, nccl.CommDestroy(cs[i]))
	}
}

// TestFP8: with a version of 2.24 or later the fake all-reduces FP8
// (ncclFloat8e4m3 10, ncclFloat8e5m2 11) rounding to nearest, ties to
// even, and saturating, checked on encodings worked out by hand; before
// 2.24 it refuses the types with ncclInvalidArgument, as NCCL does. The
// other side runs in a child process with the other version (the fake
// reads FAKENCCL_VERSION at each call, but the process's environment is
// not changed under C).
func TestFP8(t *testing.T) {
	var v int32
	must(t, nccl.GetVersion(&v))
	if v >= 22400 {
		fp8Sums(t)
	} else {
		fp8Refused(t, v)
	}
	if os.Getenv("FAKENCCL_FP8_CHILD") != "" {
		return
	}
	other := "22203"
	if v < 22400 {
		other = "22400"
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFP8$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "FAKENCCL_FP8_CHILD=1", fakenccl.VersionEnv+"="+other)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestFP8") || !strings.Contains(string(out), "NCCL "+other) {
		t.Errorf("child with NCCL %s: %v\n%s", other, err, out)
	}
}

// fp8Sums all-reduces two ranks' bytes as E4M3 and as E5M2 with ncclSum.
func fp8Sums(t *testing.T) {
	t.Logf("NCCL %d: FP8 sums", fakeVersion(t))
	for _, c := range []struct {
		typ        nccl.NcclDataType_t
		a, b, want []uint8
	}{{
		// 1+1 = 2; 448+448 saturates to 448 (0x7e), not NaN (0x7f);
		// 2⁻⁹+2⁻⁹ = 2⁻⁸ (subnormals); 1+2⁻⁴ = 1.0625, a tie between 1
		// (0x38) and 1.125 (0x39), goes to the even 1; 1.125+2⁻⁴ =
		// 1.1875 to the even 1.25 (0x3a); a NaN stays 0x7f; -448-1 =
		// -449 rounds to -448 (0xfe); 2⁻⁹ + -2⁻⁹ = 0.
		typ:  10,
		a:    []uint8{0x38, 0x7e, 0x01, 0x38, 0x39, 0x7f, 0xfe, 0x01},
		b:    []uint8{0x38, 0x7e, 0x01, 0x18, 0x18, 0x38, 0xb8, 0x81},
		want: []uint8{0x40, 0x7e, 0x02, 0x38, 0x3a, 0x7f, 0xfe, 0x00},
	}, {
		// 1+1 = 2; 57344+57344 saturates to 57344 (0x7b), not infinity;
		// an infinity saturates too; 2⁻¹⁶+2⁻¹⁶ = 2⁻¹⁵; 1+2⁻³ = 1.125,
		// a tie between 1 (0x3c) and 1.25 (0x3d), goes to the even 1;
		// 1.25+2⁻³ = 1.375 to the even 1.5 (0x3e); a NaN becomes 0x7f;
		// -inf + 1 saturates to -57344 (0xfb).
		typ:  11,
		a:    []uint8{0x3c, 0x7b, 0x7c, 0x01, 0x3c, 0x3d, 0xfe, 0xfc},
		b:    []uint8{0x3c, 0x7b, 0x3c, 0x01, 0x30, 0x30, 0x3c, 0x3c},
		want: []uint8{0x40, 0x7b, 0x7b, 0x02, 0x3c, 0x3e, 0x7f, 0xfb},
	}} {
		got := allReduceBytes(t, c.typ, nccl.NcclSum, c.a, c.b)
		for r := range got {
			if string(got[r]) != string(c.want) {
				t.Errorf("type %d: rank %d: % x + % x gave % x, want % x", c.typ, r, c.a, c.b, got[r], c.want)
			}
		}
	}
}

// fp8Refused: an FP8 all-reduce is refused by a fake older than 2.24.
func fp8Refused(t *testing.T, v int32) {
	t.Logf("NCCL %d: FP8 refused", fakeVersion(t))
	ss := streams(t)
	cs := initAll(t)
	x, err := cuda.AllocSlice[uint8](ss[0].Context(), 4)
	must(t, err)
	defer x.Close()
	for _, typ := range []nccl.NcclDataType_t{10, 11} {
		err := nccl.AllReduce(bptr(x), bptr(x), 4, typ, nccl.NcclSum, cs[0], raw(ss[0]))
		if want := fmt.Sprintf("invalid type %d (NCCL %d)", typ, v); !errors.Is(err, nccl.NcclInvalidArgument) || !strings.Contains(lastError(0), want) {
			t.Errorf("type %d with NCCL %d: %v (%s), want ncclInvalidArgument, %q", typ, v, err, lastError(0), want)
		}
	}
	for _, c := range cs {
		must(t, nccl.CommDestroy(c))
	}
}

func fakeVersion(t *testing.T) int32 {
	var v int32
	must(t, nccl.GetVersion(&v))
	return v
}

// allReduceBytes all-reduces a on rank 0 and b on rank 1, of type typ,
// in place, from one goroutine in a group, and returns both ranks' bytes.
func allReduceBytes(t *testing.T, typ nccl.NcclDataType_t, op nccl.NcclRedOp_t, a, b []uint8) [][]uint8 {
	ss := streams(t)
	var xs []*cuda.Slice[uint8]
	for i, s := range ss {
		x, err := cuda.AllocSliceFrom(s.Context(), [][]uint8{a, b}[i])
		must(t, err)
		t.Cleanup(func() { x.Close() })
		xs = append(xs, x)
	}
	cs := initAll(t)
	runtime.LockOSThread()
	must(t, nccl.GroupStart())
	for i, c := range cs {
		must(t, nccl.AllReduce(bptr(xs[i]), bptr(xs[i]), uint64(len(a)), typ, op, c, raw(ss[i])))
	}
	must(t, nccl.GroupEnd())
	runtime.UnlockOSThread()
	out := make([][]uint8, 2)
	for i, s := range ss {
		must(t, s.Synchronize())
		out[i] = make([]uint8, len(a))
		must(t, xs[i].CopyTo(out[i]))
		if r := asyncError(t, cs[i]); r != nccl.NcclSuccess {
			t.Errorf("rank %d: %v (%s)", i, r, lastError(cs[i]))
		}
		must(t, nccl.CommDestroy(cs[i]))
	}
	return out
}

// bptr is a device address of bytes as the bindings take it.
func bptr(x *cuda.Slice[uint8]) unsafe.Pointer {
	p := x.Ptr()
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}
