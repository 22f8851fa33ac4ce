//go:build linux && (amd64 || arm64)

package gds

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/cufile"
)

// File is a file registered with cuFile and bound to a stream: see the
// package comment. Its methods are safe for concurrent use.
type File struct {
	o *cuda.LibraryObject[cufile.CUfileHandle_t]
	f *os.File
}

// Error is the error of a call into cuFile.
type Error = cuda.LibraryError

func check(op, fn string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Pkg: "gds", Op: op, Func: fn, Err: err}
}

// driver opens cuFile's driver once; a failure is retried by the next
// Open, since it may come from a library the user has yet to install.
var driver struct {
	mu     sync.Mutex
	opened bool
}

func openDriver(op string) error {
	driver.mu.Lock()
	defer driver.mu.Unlock()
	if driver.opened {
		return nil
	}
	if err := cufile.DriverOpen(); err != nil {
		return check(op, "cuFileDriverOpen", err)
	}
	driver.opened = true
	return nil
}

// Open registers f with cuFile (cuFileHandleRegister) and binds it to s,
// whose context is current during each read and write. The File keeps its
// own clone of s. f must stay open until the File is closed.
func Open(s *cuda.Stream, f *os.File) (*File, error) {
	const op = "Open"
	if f == nil {
		return nil, fmt.Errorf("gds: %s: nil *os.File", op)
	}
	fd := f.Fd() // the *os.File stays in blocking mode, as pread needs
	o, err := cuda.NewLibraryObject(s, func() (cufile.CUfileHandle_t, error) {
		if err := openDriver(op); err != nil {
			return nil, err
		}
		var d cufile.CUfileDescr_t
		d.Type = cufile.CU_FILE_HANDLE_TYPE_OPAQUE_FD
		*d.Handle.Fd() = int32(fd)
		var h cufile.CUfileHandle_t
		err := cufile.HandleRegister(&h, &d)
		runtime.KeepAlive(f)
		if err != nil {
			if why := refusal(f); why != nil {
				err = errors.Join(err, why)
			}
			return nil, check(op, "cuFileHandleRegister", err)
		}
		return h, nil
	}, func(h cufile.CUfileHandle_t) error {
		return check("File.Close", "cuFileHandleDeregister", cufile.HandleDeregister(h))
	})
	if err != nil {
		return nil, err
	}
	return &File{o: o, f: f}, nil
}

// Close deregisters the file once the calls in flight have returned; the
// *os.File stays open. Closing a nil or closed File does nothing more.
func (f *File) Close() error {
	if f == nil {
		return nil
	}
	return f.o.Close()
}

// object is f's library object, nil for a nil File (which every call
// through it then reports as closed).
func (f *File) object() *cuda.LibraryObject[cufile.CUfileHandle_t] {
	if f == nil {
		return nil
	}
	return f.o
}

// ReadAt reads dst.Size() bytes from the file at byte offset off into dst
// (cuFileRead) and returns how many it read: fewer, with io.EOF, where the
// file ends first.
func ReadAt[T cuda.Element](f *File, dst *cuda.Slice[T], off int64) (int, error) {
	return transfer(f, dst, off, "ReadAt", "cuFileRead", func(h cufile.CUfileHandle_t, p unsafe.Pointer, size uint64) (int64, error) {
		return cufile.Read(h, p, size, off, 0)
	})
}

// WriteAt writes the dst.Size() bytes of src to the file at byte offset
// off (cuFileWrite) and returns how many it wrote.
func WriteAt[T cuda.Element](f *File, src *cuda.Slice[T], off int64) (int, error) {
	return transfer(f, src, off, "WriteAt", "cuFileWrite", func(h cufile.CUfileHandle_t, p unsafe.Pointer, size uint64) (int64, error) {
		return cufile.Write(h, p, size, off, 0)
	})
}

func transfer[T cuda.Element](f *File, mem *cuda.Slice[T], off int64, op, fn string, move func(cufile.CUfileHandle_t, unsafe.Pointer, uint64) (int64, error)) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("gds: %s: negative offset %d", op, off)
	}
	size := mem.Size() // 0 for a nil or closed slice, which the call then refuses
	var n int64
	err := f.object().Call("gds."+op, func(h cufile.CUfileHandle_t) error {
		p := mem.Ptr()
		var err error
		n, err = move(h, devptr.Of(p), uint64(size))
		runtime.KeepAlive(f.f)
		if err != nil {
			return check(op, fn, err)
		}
		return resultError(op, fn, n)
	}, mem)
	if err != nil {
		return 0, err
	}
	if op == "ReadAt" && int(n) < size {
		return int(n), io.EOF
	}
	return int(n), nil
}

// resultError turns cuFile's negative byte counts into errors: -1 is the
// file system's failure (errno, which the call does not return), another
// negative value a CUfileOpError.
func resultError(op, fn string, n int64) error {
	switch {
	case n >= 0:
		return nil
	case n == -1:
		return check(op, fn, errors.New("the file system failed the transfer (cuFile returned -1)"))
	default:
		return check(op, fn, cufile.CUfileOpError(-n))
	}
}
