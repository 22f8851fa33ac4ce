package cuda

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocuda/gocuda/cuda/cudatest"
)

// TestIPCRefusals checks what ExportIPC and the other exports refuse
// before the driver sees it: the wrong kind of memory, part of an
// allocation, closed and nil handles, events and pools made without
// sharing.
func TestIPCRefusals(t *testing.T) {
	dev, ctx := needGPU(t)
	wantErr := func(what string, err error, words ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		for _, w := range words {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to say %q", what, err, w)
			}
		}
	}
	if _, err := ExportIPC(nil); err == nil {
		t.Error("ExportIPC(nil): no error")
	}
	var nilMem *DeviceMemory
	if _, err := ExportIPC(nilMem); !errors.Is(err, ErrClosed) {
		t.Errorf("ExportIPC of a nil *DeviceMemory: %v", err)
	}
	m, err := AllocSlice[float32](ctx, 1024)
	must(t, err)
	part, err := m.Sub(1, 10)
	must(t, err)
	_, err = ExportIPC(part)
	wantErr("ExportIPC of part of an allocation", err, "whole allocation")
	must(t, part.Close())
	empty, err := AllocSlice[float32](ctx, 0)
	must(t, err)
	_, err = ExportIPC(empty)
	wantErr("ExportIPC of empty memory", err, "empty")
	must(t, empty.Close())
	_, err = ExportPoolPointer(m)
	wantErr("ExportPoolPointer of Alloc memory", err, "not from a pool")
	must(t, m.Close())
	if _, err := ExportIPC(m); !errors.Is(err, ErrClosed) {
		t.Errorf("ExportIPC of closed memory: %v", err)
	}

	if ok, err := dev.SupportsMemoryPools(); err == nil && ok {
		s, err := NewStream(ctx)
		must(t, err)
		a, err := AllocSlice[float32](s, 1024)
		must(t, err)
		_, err = ExportIPC(a)
		wantErr("ExportIPC of stream-ordered memory", err, "stream-ordered", "WithShareableHandles")
		_, err = ExportPoolPointer(a)
		wantErr("ExportPoolPointer of the default pool's memory", err, "WithShareableHandles")
		must(t, a.Close())
		pool, err := NewMemPool(dev)
		must(t, err)
		_, err = pool.ExportFD()
		wantErr("MemPool.ExportFD of a pool without shareable handles", err, "WithShareableHandles")
		must(t, pool.Close())
		if _, err := pool.ExportFD(); !errors.Is(err, ErrClosed) {
			t.Errorf("ExportFD of a closed pool: %v", err)
		}
		must(t, s.Synchronize())
		must(t, s.Close())
	}

	mm, err := AllocManaged(ctx, 4096, AttachGlobal)
	must(t, err)
	dm, err := mm.DeviceMemory()
	must(t, err)
	_, err = ExportIPC(dm)
	wantErr("ExportIPC of managed memory", err, "managed")
	must(t, dm.Close())
	must(t, mm.Close())

	e, err := NewEvent(ctx)
	must(t, err)
	_, err = e.ExportIPC()
	wantErr("Event.ExportIPC of an event without WithInterprocess", err, "WithInterprocess")
	must(t, e.Close())
	if _, err := e.ExportIPC(); !errors.Is(err, ErrClosed) {
		t.Errorf("ExportIPC of a closed event: %v", err)
	}

	closedCtx, err := ctx.Clone()
	must(t, err)
	must(t, closedCtx.Close())
	if _, err := ImportIPC(closedCtx, IPCMemHandle{}); !errors.Is(err, ErrClosed) {
		t.Errorf("ImportIPC in a closed context: %v", err)
	}
	if _, err := ImportIPCEvent(closedCtx, IPCEventHandle{}); !errors.Is(err, ErrClosed) {
		t.Errorf("ImportIPCEvent in a closed context: %v", err)
	}
	_, err = ImportPhysicalMemory(ctx, nil, 1<<21)
	wantErr("ImportPhysicalMemory of no file", err, "no file")
	_, err = ImportMemPool(ctx, nil)
	wantErr("ImportMemPool of no file", err, "no file")

	if g, err := AllocationGranularity(dev, false); err == nil {
		p, err := NewPhysicalMemory(ctx, g)
		must(t, err)
		_, err = p.ExportFD()
		wantErr("ExportFD of physical memory without VMShareable", err, "VMShareable")
		must(t, p.Close())
	}
}

func TestIPCHandleEncoding(t *testing.T) {
	var h IPCMemHandle
	for i := range h {
		h[i] = byte(i * 37)
	}
	text, err := h.MarshalText()
	must(t, err)
	var back IPCMemHandle
	must(t, back.UnmarshalText(text))
	if back != h || h.String() != string(text) {
		t.Errorf("text round trip: %x, want %x", back, h)
	}
	bin, err := h.MarshalBinary()
	must(t, err)
	var bb IPCMemHandle
	must(t, bb.UnmarshalBinary(bin))
	if bb != h {
		t.Error("binary round trip differs")
	}
	if err := bb.UnmarshalBinary(bin[:63]); err == nil {
		t.Error("63 bytes: no error")
	}
	if err := back.UnmarshalText([]byte(strings.Repeat("zz", 64))); err == nil {
		t.Error("not hexadecimal: no error")
	}
	var ev IPCEventHandle
	if err := ev.UnmarshalText(text[:10]); err == nil {
		t.Error("IPCEventHandle of 5 bytes: no error")
	}
	var pp PoolPointer
	must(t, pp.UnmarshalText(text))
	if pp.String() != h.String() {
		t.Error("PoolPointer round trip differs")
	}
}

func socketPair(t *testing.T) (*net.UnixConn, *net.UnixConn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	must(t, err)
	var conns [2]*net.UnixConn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socket")
		c, err := net.FileConn(f)
		must(t, err)
		f.Close()
		conns[i] = c.(*net.UnixConn)
		t.Cleanup(func() { conns[i].Close() })
	}
	return conns[0], conns[1]
}

// TestFDPassing passes descriptors and data over a socket pair and checks
// the release message and the end of the connection.
func TestFDPassing(t *testing.T) {
	a, b := socketPair(t)
	r1, w1, err := os.Pipe()
	must(t, err)
	defer r1.Close()
	defer w1.Close()
	f2, err := os.CreateTemp(t.TempDir(), "passed")
	must(t, err)
	_, err = f2.WriteString("second file")
	must(t, err)
	defer f2.Close()
	must(t, SendHandle(a, []byte("handle bytes"), r1, f2))
	must(t, SendHandle(a, nil))
	data, files, err := ReceiveHandle(b)
	must(t, err)
	if string(data) != "handle bytes" || len(files) != 2 {
		t.Fatalf("received %q and %d files", data, len(files))
	}
	_, err = w1.WriteString("through the pipe")
	must(t, err)
	w1.Close()
	got, err := io.ReadAll(files[0])
	must(t, err)
	if string(got) != "through the pipe" {
		t.Errorf("read %q from the passed pipe", got)
	}
	got2, err := os.ReadFile(filepath.Join("/proc/self/fd", fmt.Sprint(files[1].Fd())))
	must(t, err)
	if string(got2) != "second file" {
		t.Errorf("read %q from the passed file", got2)
	}
	closeFiles(files)
	data, files, err = ReceiveHandle(b)
	must(t, err)
	if len(data) != 0 || len(files) != 0 {
		t.Errorf("an empty message came as %q and %d files", data, len(files))
	}
	must(t, ReleaseHandle(b))
	must(t, WaitReleased(a))
	if _, _, err := ReceiveHandle(nil); err == nil {
		t.Error("ReceiveHandle(nil): no error")
	}
	// A release where a handle is expected is refused.
	must(t, ReleaseHandle(a))
	if _, _, err := ReceiveHandle(b); err == nil || !strings.Contains(err.Error(), "not a handle") {
		t.Errorf("ReceiveHandle of a release: %v", err)
	}
	// The importer's end closing counts as released.
	b.Close()
	must(t, WaitReleased(a))
}

// skipWithoutIPC skips t when the driver lacks the cuIpc* calls: the fake
// driver does, as it runs in one process and its device memory is private
// to it.
func skipWithoutIPC(t *testing.T, err error) error {
	t.Helper()
	if errors.Is(err, ErrMissingFunction) {
		if cudatest.Active() {
			t.Skipf("the fake driver has no cuIpc* calls (its device memory is private to its process): %v", err)
		}
		t.Skipf("the driver lacks the cuIpc* calls: %v", err)
	}
	if errorsIsNotSupported(err) {
		t.Skipf("the device does not support IPC: %v", err)
	}
	return err
}

// TestIPCTwoProcesses exports device memory and an interprocess event to a
// child process: the parent fills the memory on a stream and records the
// event; the child waits for the event on a stream of its own, checks the
// data, writes its own, closes its imports and releases; the parent then
// reads what the child wrote.
func TestIPCTwoProcesses(t *testing.T) {
	if os.Getenv(vmmChildEnv) != "" {
		t.Skip("the parent's test")
	}
	_, ctx := needGPU(t)
	const n = 1 << 22
	m, err := AllocSlice[uint32](ctx, n)
	must(t, err)
	defer m.Close()
	h, err := ExportIPC(m)
	must(t, skipWithoutIPC(t, err))
	if _, err := ImportIPC(ctx, h); err == nil || !strings.Contains(err.Error(), "this process") {
		t.Errorf("importing this process's own export: %v", err)
	}
	ev, err := NewEvent(ctx, WithInterprocess())
	must(t, err)
	defer ev.Close()
	eh, err := ev.ExportIPC()
	must(t, err)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	must(t, m.FillAsync(s, 7))
	must(t, ev.Record(s))

	conn, wait := startChild(t, "TestIPCChild")
	defer conn.Close()
	must(t, SendHandle(conn, append(h[:], eh[:]...)))
	must(t, WaitReleased(conn))
	wait()
	must(t, s.Synchronize())
	got := make([]uint32, n)
	must(t, m.CopyTo(got))
	for i, v := range got {
		if v != uint32(i)*3 {
			t.Fatalf("element %d is %d after the child wrote, want %d", i, v, uint32(i)*3)
		}
	}
}

func TestIPCChild(t *testing.T) {
	conn := childConn(t)
	defer conn.Close()
	_, ctx := needGPU(t)
	data, _, err := ReceiveHandle(conn)
	must(t, err)
	var h IPCMemHandle
	var eh IPCEventHandle
	must(t, h.UnmarshalBinary(data[:64]))
	must(t, eh.UnmarshalBinary(data[64:]))
	m, err := ImportIPCSlice[uint32](ctx, h)
	must(t, err)
	if LiveObjects().IPCImports != 1 {
		t.Errorf("IPCImports %d, want 1", LiveObjects().IPCImports)
	}
	ev, err := ImportIPCEvent(ctx, eh)
	must(t, err)
	s, err := NewStream(ctx)
	must(t, err)
	must(t, s.WaitEvent(ev)) // the parent's fill comes first
	got := make([]uint32, m.Len())
	must(t, m.CopyToHost(s, got))
	must(t, s.Synchronize())
	for i, v := range got {
		if v != 7 {
			t.Fatalf("element %d is %d, want the parent's 7", i, v)
		}
		got[i] = uint32(i) * 3
	}
	must(t, m.CopyFrom(got))
	must(t, s.Close())
	must(t, ev.Close())
	must(t, m.Close())
	if LiveObjects().IPCImports != 0 {
		t.Errorf("IPCImports %d after Close, want 0", LiveObjects().IPCImports)
	}
	must(t, ReleaseHandle(conn))
}

// TestPoolIPCTwoProcesses shares a pool made WithShareableHandles and one
// of its allocations with a child process.
func TestPoolIPCTwoProcesses(t *testing.T) {
	if os.Getenv(vmmChildEnv) != "" {
		t.Skip("the parent's test")
	}
	dev, ctx := needGPU(t)
	pool, err := NewMemPool(dev, WithShareableHandles())
	if errors.Is(err, ErrMissingFunction) || errorsIsNotSupported(err) {
		t.Skipf("no pools with shareable handles here: %v", err)
	}
	must(t, err)
	defer pool.Close()
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	const n = 1 << 20
	dm, err := AllocFromPool(s, pool, 4*n)
	must(t, err)
	defer dm.Close()
	m, err := SliceOf[uint32](dm)
	must(t, err)
	defer m.Close()
	must(t, m.FillAsync(s, 11))
	must(t, s.Synchronize())
	f, err := pool.ExportFD()
	must(t, err)
	pp, err := ExportPoolPointer(m)
	must(t, err)
	conn, wait := startChild(t, "TestPoolIPCChild")
	defer conn.Close()
	must(t, SendHandle(conn, pp[:], f))
	f.Close()
	must(t, WaitReleased(conn))
	wait()
	got := make([]uint32, n)
	must(t, m.CopyTo(got))
	for i, v := range got {
		if v != 12 {
			t.Fatalf("element %d is %d after the child wrote, want 12", i, v)
		}
	}
}

func errorsIsNotSupported(err error) bool {
	var ce *Error
	return errors.As(err, &ce) && ce.Result == 801 // CUDA_ERROR_NOT_SUPPORTED
}

func TestPoolIPCChild(t *testing.T) {
	conn := childConn(t)
	defer conn.Close()
	_, ctx := needGPU(t)
	data, files, err := ReceiveHandle(conn)
	must(t, err)
	if len(files) != 1 {
		t.Fatalf("%d files", len(files))
	}
	pool, err := ImportMemPool(ctx, files[0])
	must(t, err)
	files[0].Close()
	var pp PoolPointer
	must(t, pp.UnmarshalBinary(data))
	dm, err := ImportPoolPointer(ctx, pool, pp)
	must(t, err)
	m, err := SliceOf[uint32](dm)
	must(t, err)
	got := make([]uint32, m.Len())
	must(t, m.CopyTo(got))
	for i, v := range got {
		if v != 11 {
			t.Fatalf("element %d is %d, want 11", i, v)
		}
	}
	must(t, m.Fill(12))
	must(t, m.Close())
	must(t, dm.Close())
	must(t, pool.Close())
	must(t, ReleaseHandle(conn))
}

// TestIPCPython shares memory with Python's cuda.bindings both ways
// (testdata/ipc_interop.py), with the interpreter GOCUDA_TEST_PYTHON
// names.
func TestIPCPython(t *testing.T) {
	py := os.Getenv("GOCUDA_TEST_PYTHON")
	if py == "" {
		t.Skip("GOCUDA_TEST_PYTHON names no Python interpreter with cuda.bindings")
	}
	if os.Getenv(vmmChildEnv) != "" {
		t.Skip("the parent's test")
	}
	_, ctx := needGPU(t)
	const n = 1 << 16
	script := filepath.Join("testdata", "ipc_interop.py")

	// Go exports, Python imports, checks and writes.
	m, err := AllocSlice[uint32](ctx, n)
	must(t, err)
	defer m.Close()
	vals := make([]uint32, n)
	for i := range vals {
		vals[i] = uint32(i) * 3
	}
	must(t, m.CopyFrom(vals))
	h, err := ExportIPC(m)
	must(t, skipWithoutIPC(t, err))
	out, err := exec.Command(py, script, "import", h.String(), fmt.Sprint(n)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("python import: %v\n%s", err, out)
	}
	must(t, m.CopyTo(vals))
	for i, v := range vals {
		if v != uint32(i)*5 {
			t.Fatalf("element %d is %d after Python wrote, want %d", i, v, uint32(i)*5)
		}
	}

	// Python exports, Go imports, checks and writes.
	cmd := exec.Command(py, script, "export", fmt.Sprint(n))
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	must(t, cmd.Start())
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		t.Fatalf("python export printed no handle: %s", stderr.String())
	}
	var ph IPCMemHandle
	must(t, ph.UnmarshalText([]byte(strings.TrimSpace(lines.Text()))))
	pm, err := ImportIPCSlice[uint32](ctx, ph)
	must(t, err)
	if pm.Len() < n {
		t.Fatalf("imported %d elements, want at least %d", pm.Len(), n)
	}
	got := make([]uint32, n)
	must(t, pm.CopyTo(got))
	for i, v := range got {
		if v != uint32(i)*11 {
			t.Fatalf("element %d of Python's memory is %d, want %d", i, v, uint32(i)*11)
		}
		got[i] = uint32(i) * 13
	}
	must(t, pm.CopyFrom(got))
	must(t, pm.Close())
	_, err = io.WriteString(stdin, "done\n")
	must(t, err)
	stdin.Close()
	var rest strings.Builder
	for lines.Scan() {
		rest.WriteString(lines.Text() + "\n")
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("python export did not end")
	}
	if err != nil || !strings.Contains(rest.String(), "ok") {
		t.Fatalf("python export: %v\n%s%s", err, rest.String(), stderr.String())
	}
}
