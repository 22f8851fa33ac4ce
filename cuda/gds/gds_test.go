//go:build linux && (amd64 || arm64)

package gds_test

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/cuda/gds"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/generated/cufile"
	"github.com/gocuda/gocuda/internal/fakecufile"
)

// tempFile writes data to a new file and returns it open for reading and
// writing, closed when t ends. The file is in the test's temporary
// directory, which TestMain puts where cuFile registers files; t is
// skipped where there is no such place.
func tempFile(t *testing.T, data []byte) *os.File {
	t.Helper()
	dir := t.TempDir()
	if why := gds.Unregistrable(dir, realCuFile()); why != nil {
		t.Skipf("cuFile registers no file in %s, nor in the other directories tried (%v): set GOCUDA_TEST_GDS_DIR to a directory on ext4 or XFS whose block device udev has recorded", dir, why)
	}
	return fileIn(t, dir, data)
}

// fileIn writes data to a new file in dir and returns it open for reading
// and writing, closed when t ends.
func fileIn(t *testing.T, dir string, data []byte) *os.File {
	t.Helper()
	p := filepath.Join(dir, "data.bin")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// open registers f on a new stream, skipping where there is no cuFile
// (unless GOCUDA_TEST_LIBS=required).
func open(t *testing.T, f *os.File) (*cuda.Context, *cuda.Stream, *gds.File) {
	t.Helper()
	ctx, s := libtest.Stream(t)
	g, err := gds.Open(s, f)
	if errors.Is(err, cufile.ErrNoLibrary) {
		libtest.Unavailable(t, "no cuFile library: %v", err)
	}
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { g.Close() })
	return ctx, s, g
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func deviceBytes(t *testing.T, ctx *cuda.Context, n int) *cuda.Slice[byte] {
	t.Helper()
	s, err := cuda.AllocSlice[byte](ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func host(t *testing.T, s *cuda.Slice[byte]) []byte {
	t.Helper()
	b := make([]byte, s.Len())
	if err := s.CopyTo(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReadAtAndWriteAtMoveTheFilesBytes reads a file at an offset into
// device memory and into part of a slice, writes device memory back at
// another offset, and checks the bytes on both sides.
func TestReadAtAndWriteAtMoveTheFilesBytes(t *testing.T) {
	data := randomBytes(1<<20, 1)
	f := tempFile(t, data)
	ctx, _, g := open(t, f)

	const off, n = 4096, 256 << 10
	dst := deviceBytes(t, ctx, n)
	got, err := gds.ReadAt(g, dst, off)
	if err != nil || got != n {
		t.Fatalf("ReadAt = %d, %v; want %d, nil", got, err, n)
	}
	if !bytes.Equal(host(t, dst), data[off:off+n]) {
		t.Fatal("the device memory does not hold the file's bytes")
	}

	// Into the middle of a slice: the rest stays as it was.
	whole := deviceBytes(t, ctx, 3000)
	if err := whole.Fill(0xee); err != nil {
		t.Fatal(err)
	}
	mid, err := whole.Sub(1000, 2000)
	if err != nil {
		t.Fatal(err)
	}
	defer mid.Close()
	if got, err := gds.ReadAt(g, mid, 17); err != nil || got != 1000 {
		t.Fatalf("ReadAt into a sub-slice = %d, %v", got, err)
	}
	h := host(t, whole)
	if !bytes.Equal(h[1000:2000], data[17:1017]) || bytes.Count(h[:1000], []byte{0xee}) != 1000 || bytes.Count(h[2000:], []byte{0xee}) != 1000 {
		t.Fatal("a read into a sub-slice wrote outside it, or not the file's bytes")
	}

	src, err := cuda.AllocSliceFrom(ctx, randomBytes(5000, 2))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if put, err := gds.WriteAt(g, src, 100000); err != nil || put != 5000 {
		t.Fatalf("WriteAt = %d, %v; want 5000, nil", put, err)
	}
	after, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	want := append([]byte(nil), data...)
	copy(want[100000:], randomBytes(5000, 2))
	if !bytes.Equal(after, want) {
		t.Fatal("the file after WriteAt is not the original with the written bytes in place")
	}
}

// TestReadAtEndOfFileIsShortWithEOF: past the end, ReadAt returns what
// there was and io.EOF, as io.ReaderAt does.
func TestReadAtEndOfFileIsShortWithEOF(t *testing.T) {
	data := randomBytes(100, 3)
	ctx, _, g := open(t, tempFile(t, data))
	dst := deviceBytes(t, ctx, 256)
	got, err := gds.ReadAt(g, dst, 40)
	if got != 60 || err != io.EOF {
		t.Fatalf("ReadAt of 256 bytes at 40 of a 100-byte file = %d, %v; want 60, io.EOF", got, err)
	}
	if !bytes.Equal(host(t, dst)[:60], data[40:]) {
		t.Fatal("the short read's bytes are not the file's")
	}
	if got, err := gds.ReadAt(g, dst, 1000); got != 0 || err != io.EOF {
		t.Fatalf("ReadAt past the end = %d, %v; want 0, io.EOF", got, err)
	}
}

// TestRefusedBeforeCuFile: what cannot be right is refused without a call
// into cuFile, and a closed File, slice or stream is ErrClosed.
func TestRefusedBeforeCuFile(t *testing.T) {
	f := tempFile(t, randomBytes(4096, 4))
	ctx, s, g := open(t, f)
	dst := deviceBytes(t, ctx, 64)

	if _, err := gds.Open(s, nil); err == nil || !strings.Contains(err.Error(), "nil *os.File") {
		t.Errorf("Open(nil file) = %v", err)
	}
	if _, err := gds.ReadAt(g, dst, -1); err == nil || !strings.Contains(err.Error(), "negative offset") {
		t.Errorf("ReadAt at -1 = %v", err)
	}
	if _, err := gds.WriteAt(g, dst, -8); err == nil || !strings.Contains(err.Error(), "negative offset") {
		t.Errorf("WriteAt at -8 = %v", err)
	}
	if _, err := gds.ReadAt(nil, dst, 0); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("ReadAt on a nil File = %v, want ErrClosed", err)
	}
	if _, err := gds.ReadAt[byte](g, nil, 0); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("ReadAt into a nil slice = %v, want ErrClosed", err)
	}
	closed := deviceBytes(t, ctx, 64)
	closed.Close()
	if _, err := gds.ReadAt(g, closed, 0); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("ReadAt into a closed slice = %v, want ErrClosed", err)
	}
	closedStream, err := cuda.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	closedStream.Close()
	if _, err := gds.Open(closedStream, f); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Open on a closed stream = %v, want ErrClosed", err)
	}
	if err := g.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := gds.ReadAt(g, dst, 0); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("ReadAt after Close = %v, want ErrClosed", err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("a second Close = %v", err)
	}
	// Closing the File leaves the *os.File open.
	if _, err := f.ReadAt(make([]byte, 1), 0); err != nil {
		t.Errorf("the *os.File after the File's Close: %v", err)
	}
}

// TestConcurrentReadsEachGetTheirRange reads disjoint ranges of one file
// from many goroutines through one File, for the race detector and for
// the bytes.
func TestConcurrentReadsEachGetTheirRange(t *testing.T) {
	const parts, size = 8, 32 << 10
	data := randomBytes(parts*size, 5)
	ctx, _, g := open(t, tempFile(t, data))
	dsts := make([]*cuda.Slice[byte], parts)
	for i := range dsts {
		dsts[i] = deviceBytes(t, ctx, size)
	}
	var wg sync.WaitGroup
	errs := make([]error, parts)
	for i := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 4 {
				if n, err := gds.ReadAt(g, dsts[i], int64(i*size)); err != nil || n != size {
					errs[i] = errors.Join(err, errors.New("short read"))
					return
				}
			}
		}()
	}
	wg.Wait()
	for i := range parts {
		if errs[i] != nil {
			t.Fatalf("reader %d: %v", i, errs[i])
		}
		if !bytes.Equal(host(t, dsts[i]), data[i*size:(i+1)*size]) {
			t.Fatalf("reader %d got another range's bytes", i)
		}
	}
}

// TestCuFileErrorsNameTheCall: on the fake cuFile, whose answer is known,
// a second registration of one descriptor fails with cuFile's code,
// matched by errors.Is and named with the call.
func TestCuFileErrorsNameTheCall(t *testing.T) {
	f := tempFile(t, randomBytes(64, 6))
	_, s, _ := open(t, f)
	if !fakecufile.Active() {
		t.Skip("the answer to a second registration is the fake cuFile's; cuFile's own is not documented")
	}
	_, err := gds.Open(s, f)
	var le *cuda.LibraryError
	if !errors.Is(err, cufile.CU_FILE_HANDLE_ALREADY_REGISTERED) || !errors.As(err, &le) || le.Func != "cuFileHandleRegister" || le.Pkg != "gds" {
		t.Fatalf("a second Open of one file = %v, want CU_FILE_HANDLE_ALREADY_REGISTERED from cuFileHandleRegister", err)
	}
}

// refusedOpen opens f on a new stream, which must fail (what names the
// case in the failure), and returns the error; t is skipped where there
// is no cuFile.
func refusedOpen(t *testing.T, f *os.File, what string) error {
	t.Helper()
	_, s := libtest.Stream(t)
	g, err := gds.Open(s, f)
	if errors.Is(err, cufile.ErrNoLibrary) {
		libtest.Unavailable(t, "no cuFile library: %v", err)
	}
	if err == nil {
		g.Close()
		t.Fatalf("Open %s succeeded", what)
	}
	return err
}

// realCuFile reports whether the tests run against the real cuFile, which
// reads udev's records, rather than the fake one, which reads them only
// where a test points it at some.
func realCuFile() bool { return !cudatest.Active() }

// TestOpenOnTmpfsNamesTheFilesystem: cuFile refuses a file on tmpfs, and
// Open's error says why, matching both ErrUnsupportedFilesystem and
// cuFile's code.
func TestOpenOnTmpfsNamesTheFilesystem(t *testing.T) {
	const shm = "/dev/shm"
	if gds.Unregistrable(shm, false) == nil {
		t.Skipf("%s is not tmpfs here", shm)
	}
	f, err := os.CreateTemp(shm, "gds-test-")
	if err != nil {
		t.Skipf("no file on tmpfs: %v", err)
	}
	t.Cleanup(func() { f.Close(); os.Remove(f.Name()) })
	err = refusedOpen(t, f, "of a file on tmpfs")
	if !errors.Is(err, gds.ErrUnsupportedFilesystem) || !errors.Is(err, cufile.CU_FILE_HANDLE_NOT_REGISTERED) || !strings.Contains(err.Error(), "tmpfs") {
		t.Errorf("Open on tmpfs: %v; want an error matching ErrUnsupportedFilesystem and CU_FILE_HANDLE_NOT_REGISTERED that names tmpfs", err)
	}
}

// TestOpenWithoutUdevRecordSaysSo: cuFile registers no file on a block
// device of which udev has recorded nothing, and Open's error says so,
// naming the record, and matches cuFile's code; once the record is there,
// the same file registers. On the fake cuFile the test makes the records;
// on the real one it runs only where the record is missing.
func TestOpenWithoutUdevRecordSaysSo(t *testing.T) {
	records := t.TempDir()
	if realCuFile() {
		records = ""
	} else {
		t.Setenv("FAKECUFILE_UDEV_DATA", records)
		t.Cleanup(gds.SetUdevData(records))
	}
	dir := t.TempDir()
	if why := gds.Unregistrable(dir, false); why != nil {
		t.Skipf("no directory on a filesystem cuFile takes: %v", why)
	}
	f := fileIn(t, dir, randomBytes(4096, 3))
	record := gds.UdevRecord(f)
	if _, err := os.Stat(record); err == nil {
		t.Skipf("udev has recorded the device under %s (%s): cuFile's refusal cannot be provoked here", dir, record)
	}
	err := refusedOpen(t, f, "with no udev record of the file's device ("+record+")")
	if !errors.Is(err, cufile.CU_FILE_HANDLE_NOT_REGISTERED) || !strings.Contains(err.Error(), "udev has no record") || !strings.Contains(err.Error(), record) {
		t.Fatalf("Open without a udev record: %v; want an error matching CU_FILE_HANDLE_NOT_REGISTERED that names the missing record %s", err, record)
	}
	if records == "" {
		return
	}
	if err := os.WriteFile(record, []byte("E:ID_FS_TYPE=ext4\nE:ID_FS_USAGE=filesystem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, s := libtest.Stream(t)
	g, err := gds.Open(s, f)
	if err != nil {
		t.Fatalf("Open with the device's udev record: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
}
