package cuda

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
)

// skipWithoutVMM skips t when the driver lacks virtual memory management
// (or, on a GPU, does not support it), and returns err otherwise. The fake
// driver has it: there, its absence fails t.
func skipWithoutVMM(t *testing.T, err error) error {
	t.Helper()
	if errors.Is(err, ErrMissingFunction) {
		if cudatest.Active() {
			t.Fatalf("the fake driver lacks virtual memory management: %v", err)
		}
		t.Skipf("the driver lacks virtual memory management: %v", err)
	}
	return err
}

func TestVMMRange(t *testing.T) {
	dev, ctx := needGPU(t)
	g, err := AllocationGranularity(dev, false)
	must(t, skipWithoutVMM(t, err))
	if g <= 0 || g&(g-1) != 0 {
		t.Fatalf("granularity %d is not a power of two", g)
	}
	before := LiveObjects()

	if _, err := ReserveAddressRange(ctx, g+1, 0); err == nil || !strings.Contains(err.Error(), "granularity") {
		t.Errorf("a range of granularity+1 bytes: %v, want a granularity error", err)
	}
	if _, err := NewPhysicalMemory(ctx, 0); err == nil {
		t.Error("physical memory of 0 bytes: no error")
	}
	r, err := ReserveAddressRange(ctx, 4*g, 0)
	must(t, err)
	if r.Ptr() == 0 || r.Size() != 4*g || int(r.Ptr())%g != 0 {
		t.Fatalf("range at %#x of %d bytes", r.Ptr(), r.Size())
	}
	p, err := NewPhysicalMemory(ctx, 2*g)
	must(t, err)
	if n := LiveObjects(); n.AddressRanges != before.AddressRanges+1 || n.PhysicalMemory != before.PhysicalMemory+1 {
		t.Errorf("live objects %+v after a range and physical memory, before %+v", n, before)
	}
	if _, err := RangeSlice[float32](r, 0, 4); err == nil {
		t.Error("a slice of unmapped addresses: no error")
	}
	must(t, r.Map(g, p, 0, 2*g))
	if err := r.Map(2*g, p, 0, g); err == nil || !strings.Contains(err.Error(), "mapped already") {
		t.Errorf("an overlapping Map: %v", err)
	}
	if err := r.Map(3*g, p, g, 2*g); err == nil {
		t.Error("a Map past the physical memory's end: no error")
	}
	// The range keeps what it maps: the handle can go at once.
	must(t, p.Close())
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if p.Size() != 0 || p.Raw() != 0 {
		t.Error("a closed PhysicalMemory reports its size or handle")
	}
	must(t, r.SetAccess(g, 2*g))

	n := 2 * g / 4
	s, err := RangeSlice[uint32](r, g, n)
	must(t, err)
	if s.Ptr() != r.Ptr()+cu.CUdeviceptr(g) || s.Len() != n {
		t.Fatalf("slice at %#x of %d, want %#x of %d", s.Ptr(), s.Len(), r.Ptr()+cu.CUdeviceptr(g), n)
	}
	want := make([]uint32, n)
	for i := range want {
		want[i] = uint32(i*7 + 1)
	}
	must(t, s.CopyFrom(want))
	got := make([]uint32, n)
	must(t, s.CopyTo(got))
	if !slices.Equal(got, want) {
		t.Fatal("the mapped memory does not read back what was written")
	}
	if err := r.Unmap(g, 2*g); err == nil || !strings.Contains(err.Error(), "open") {
		t.Errorf("Unmap with a slice open: %v, want a refusal", err)
	}
	// A view keeps the range past its handle's Close.
	r2, err := r.Clone()
	must(t, err)
	must(t, r2.Close())
	must(t, s.CopyTo(got))
	must(t, s.Close())
	if err := r.Unmap(g, g); err == nil {
		t.Error("an Unmap cutting a mapping in two: no error")
	}
	must(t, r.Unmap(g, 2*g))
	if err := r.Unmap(g, 2*g); err == nil {
		t.Error("an Unmap of nothing mapped: no error")
	}
	must(t, r.Close())
	for _, err := range []error{
		r.Map(0, p, 0, g), r.SetAccess(0, g), r.Unmap(0, g), p2err(RangeSlice[float32](r, 0, 1)),
		p2err(p.ExportFD()), p2err(p.Clone()), p2err(r.Clone()),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("a call on a closed handle: %v, want ErrClosed", err)
		}
	}
	var nilRange *AddressRange
	if err := nilRange.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("nil AddressRange's Close: %v", err)
	}
	if n := LiveObjects(); n != before {
		t.Errorf("live objects %+v after every Close, before %+v", n, before)
	}
}

func p2err[T any](_ T, err error) error { return err }

func TestGrowableSlice(t *testing.T) {
	dev, ctx := needGPU(t)
	_, err := AllocationGranularity(dev, true)
	must(t, skipWithoutVMM(t, err))
	g, err := NewGrowableSlice[float32](ctx, 64<<20)
	must(t, err)
	defer g.Close()
	base := g.Ptr()
	if g.Len() != 0 || g.Cap() != 0 || g.MaxLen() < 64<<20 {
		t.Fatalf("new: len %d cap %d max %d", g.Len(), g.Cap(), g.MaxLen())
	}
	var want []float32
	chunk := make([]float32, 300_000) // over a 2 MiB granule in a few appends
	for round := range 5 {
		for i := range chunk {
			chunk[i] = float32(round*len(chunk) + i)
		}
		must(t, g.Append(chunk))
		want = append(want, chunk...)
		if g.Ptr() != base {
			t.Fatalf("the base moved from %#x to %#x", base, g.Ptr())
		}
	}
	if g.Len() != len(want) || g.Cap() < len(want) {
		t.Fatalf("len %d cap %d, want len %d", g.Len(), g.Cap(), len(want))
	}
	s, err := g.Slice()
	must(t, err)
	got := make([]float32, len(want))
	must(t, s.CopyTo(got))
	if !slices.Equal(got, want) {
		t.Fatal("the grown slice does not hold what was appended")
	}
	// The view works with the rest of the package: a device copy.
	d, err := AllocSlice[float32](ctx, len(want))
	must(t, err)
	must(t, CopySlice(d, s))
	clear(got)
	must(t, d.CopyTo(got))
	must(t, d.Close())
	if !slices.Equal(got, want) {
		t.Fatal("a device copy from the view differs")
	}
	if err := g.Grow(g.MaxLen() + 1); err == nil {
		t.Error("growing past the reservation: no error")
	}
	must(t, g.Close())
	// The view keeps the memory past the GrowableSlice's Close.
	must(t, s.CopyTo(got[:10]))
	must(t, s.Close())
	if err := g.Append(chunk); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v", err)
	}
	if _, err := g.Slice(); !errors.Is(err, ErrClosed) {
		t.Errorf("Slice after Close: %v", err)
	}
}

// TestGrowableSlicePeers gives a second device access to the memory.
func TestGrowableSlicePeers(t *testing.T) {
	dev, ctx := needGPU(t)
	_, err := AllocationGranularity(dev, false)
	must(t, skipWithoutVMM(t, err))
	devs, err := Devices()
	must(t, err)
	if len(devs) < 2 {
		t.Skip("one device: no peer to give access to")
	}
	if ok, err := CanAccessPeer(devs[1], devs[0]); err != nil || !ok {
		t.Skipf("device 1 cannot access device 0's memory (%v)", err)
	}
	g, err := NewGrowableSlice[int32](ctx, 1<<20, VMAccess(devs[1]))
	must(t, err)
	defer g.Close()
	must(t, g.Append([]int32{1, 2, 3}))
	ctx1, err := PrimaryContext(devs[1])
	must(t, err)
	defer ctx1.Close()
	d, err := AllocSlice[int32](ctx1, 3)
	must(t, err)
	defer d.Close()
	s, err := g.Slice()
	must(t, err)
	defer s.Close()
	must(t, CopySlice(d, s)) // on device 1, reading device 0's memory
	got := make([]int32, 3)
	must(t, d.CopyTo(got))
	if !slices.Equal(got, []int32{1, 2, 3}) {
		t.Fatalf("device 1 read %v", got)
	}
}

// vmmChildEnv makes this test binary, run as a child, the importing
// process of TestVMMTwoProcesses or TestIPCTwoProcesses.
const vmmChildEnv = "GOCUDA_TEST_IPC_CHILD"

// startChild runs the test name of this binary as a child process with one
// end of a Unix socket pair as its descriptor 3, and returns the other end
// and a function that waits for the child and fails t unless it passed.
func startChild(t *testing.T, name string) (*net.UnixConn, func()) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	must(t, err)
	mine, theirs := os.NewFile(uintptr(fds[0]), "parent"), os.NewFile(uintptr(fds[1]), "child")
	fc, err := net.FileConn(mine)
	must(t, err)
	mine.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), vmmChildEnv+"=1")
	cmd.ExtraFiles = []*os.File{theirs}
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	must(t, cmd.Start())
	theirs.Close()
	return fc.(*net.UnixConn), func() {
		err := cmd.Wait()
		if err != nil || !strings.Contains(out.String(), "--- PASS: "+name) {
			t.Fatalf("child %s: %v\n%s", name, err, out)
		}
	}
}

// childConn is the child's end of startChild's socket, or skips t when
// this process is not such a child.
func childConn(t *testing.T) *net.UnixConn {
	t.Helper()
	if os.Getenv(vmmChildEnv) == "" {
		t.Skip("run by a parent test as its child process")
	}
	c, err := net.FileConn(os.NewFile(3, "socket"))
	must(t, err)
	return c.(*net.UnixConn)
}

// TestVMMTwoProcesses shares physical memory with a child process through
// a file descriptor: the child maps it, checks what the parent wrote,
// writes its own values and releases it, which the parent then reads.
// The fake driver's physical memory is a memory file, so this runs there
// too.
func TestVMMTwoProcesses(t *testing.T) {
	if os.Getenv(vmmChildEnv) != "" {
		t.Skip("the parent's test")
	}
	dev, ctx := needGPU(t)
	g, err := AllocationGranularity(dev, false)
	must(t, skipWithoutVMM(t, err))
	p, err := NewPhysicalMemory(ctx, g, VMShareable())
	must(t, err)
	defer p.Close()
	r, err := ReserveAddressRange(ctx, g, 0)
	must(t, err)
	defer r.Close()
	must(t, r.Map(0, p, 0, g))
	must(t, r.SetAccess(0, g))
	s, err := RangeSlice[uint32](r, 0, g/4)
	must(t, err)
	defer s.Close()
	vals := make([]uint32, g/4)
	for i := range vals {
		vals[i] = uint32(i) ^ 0x5a5a
	}
	must(t, s.CopyFrom(vals))

	f, err := p.ExportFD()
	must(t, err)
	conn, wait := startChild(t, "TestVMMChild")
	defer conn.Close()
	must(t, SendHandle(conn, []byte{byte(g >> 24), byte(g >> 16), byte(g >> 8), byte(g)}, f))
	f.Close()
	must(t, WaitReleased(conn))
	wait()
	got := make([]uint32, len(vals))
	must(t, s.CopyTo(got))
	for i := range got {
		if got[i] != ^vals[i] {
			t.Fatalf("element %d is %#x after the child wrote, want %#x", i, got[i], ^vals[i])
		}
	}
}

func TestVMMChild(t *testing.T) {
	conn := childConn(t)
	defer conn.Close()
	_, ctx := needGPU(t)
	data, files, err := ReceiveHandle(conn)
	must(t, err)
	if len(files) != 1 || len(data) != 4 {
		t.Fatalf("received %d bytes and %d files", len(data), len(files))
	}
	size := int(data[0])<<24 | int(data[1])<<16 | int(data[2])<<8 | int(data[3])
	p, err := ImportPhysicalMemory(ctx, files[0], size)
	must(t, err)
	files[0].Close()
	r, err := ReserveAddressRange(ctx, size, 0)
	must(t, err)
	must(t, r.Map(0, p, 0, size))
	must(t, p.Close())
	must(t, r.SetAccess(0, size))
	s, err := RangeSlice[uint32](r, 0, size/4)
	must(t, err)
	got := make([]uint32, size/4)
	must(t, s.CopyTo(got))
	for i := range got {
		if got[i] != uint32(i)^0x5a5a {
			t.Fatalf("element %d is %#x, want %#x", i, got[i], uint32(i)^0x5a5a)
		}
		got[i] = ^got[i]
	}
	must(t, s.CopyFrom(got))
	must(t, s.Close())
	must(t, r.Close())
	must(t, ReleaseHandle(conn))
}
