//go:build linux && (amd64 || arm64)

package sparse

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cusparse"
)

// Handle is a cuSPARSE handle bound to a stream: see the package comment.
//
// All methods, and the functions that take a Handle, are safe for
// concurrent use; calls on one handle and its clones take turns.
type Handle struct {
	o  *cuda.LibraryObject[cusparse.CusparseHandle_t]
	sh *shared
}

// shared is what a handle's clones share besides the cuSPARSE object.
type shared struct {
	// mu serializes the calls on the handle: cuSPARSE keeps per-handle
	// state on the host and does not promise it to two threads at once.
	// It also guards work, retired and cache.
	mu sync.Mutex
	// work is the workspace of SpMV and SpMM, grown to the largest size
	// asked for: every call on the handle is queued on its one stream, so
	// a call's workspace is free again for the next in stream order. A
	// workspace outgrown is retired, not freed, until the handle is
	// destroyed: a graph captured from the stream may still use it.
	work    *cuda.DeviceMemory
	retired []*cuda.DeviceMemory
	// cache keeps SpMV's and SpMM's descriptors and workspace sizes.
	cache descrCache
}

// Error is the error of a call into the library: the operation, the C
// function that failed and its cause, a cusparse.CusparseStatus_t that
// errors.Is matches.
type Error = cuda.LibraryError

func check(op, fn string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Pkg: "sparse", Op: strings.TrimPrefix(op, "sparse."), Func: fn, Err: err}
}

// invalid is the error of input refused before cuSPARSE is called.
func invalid(op, format string, args ...any) error {
	return fmt.Errorf("sparse: %s: %s", op, fmt.Sprintf(format, args...))
}

// New makes a cuSPARSE handle whose work goes to s (cusparseCreate,
// cusparseSetStream). The handle keeps its own clone of s: closing s does
// not end it.
func New(s *cuda.Stream) (*Handle, error) {
	const op = "New"
	raw := s.Raw()
	sh := &shared{}
	o, err := cuda.NewLibraryObject(s, func() (cusparse.CusparseHandle_t, error) {
		var h cusparse.CusparseHandle_t
		if err := cusparse.Create(&h); err != nil {
			return 0, check(op, "cusparseCreate", err)
		}
		if err := cusparse.SetStream(h, raw); err != nil {
			_ = cusparse.Destroy(h)
			return 0, check(op, "cusparseSetStream", err)
		}
		return h, nil
	}, func(h cusparse.CusparseHandle_t) error {
		sh.cache.drop()
		errs := []error{check("Handle.Close", "cusparseDestroy", cusparse.Destroy(h))}
		if sh.work != nil {
			errs = append(errs, sh.work.Close())
			sh.work = nil
		}
		for _, m := range sh.retired {
			errs = append(errs, m.Close())
		}
		sh.retired = nil
		return errors.Join(errs...)
	})
	if err != nil {
		return nil, err
	}
	return &Handle{o: o, sh: sh}, nil
}

func (h *Handle) object() *cuda.LibraryObject[cusparse.CusparseHandle_t] {
	if h == nil {
		return nil
	}
	return h.o
}

// call runs fn on the raw handle with the handle and hold held and its
// context current (cuda.LibraryObject.Call), after the calls of other
// goroutines on the handle. fn gets the handle's stream too, for memory
// allocated in stream order.
func (h *Handle) call(op string, fn func(raw cusparse.CusparseHandle_t, s *cuda.Stream) error, hold ...cuda.Holder) error {
	// The stream is taken before the call: Stream inside it would take
	// the object's lock a second time.
	s := h.object().Stream()
	return h.object().Call(op, func(raw cusparse.CusparseHandle_t) error {
		h.sh.mu.Lock()
		defer h.sh.mu.Unlock()
		return fn(raw, s)
	}, hold...)
}

// workspace returns at least bytes of the handle's workspace, allocated
// on s in stream order; nil for 0 bytes. The caller holds sh.mu. It grows
// the workspace at least twofold, so that the retired ones take less
// than the one in use, and refuses to grow it while s is capturing: the
// allocation would be the graph's.
func (h *Handle) workspace(op string, s *cuda.Stream, bytes int) (*cuda.DeviceMemory, error) {
	if bytes == 0 {
		return nil, nil
	}
	have := 0
	if h.sh.work != nil {
		have = h.sh.work.Size()
	}
	if have >= bytes {
		return h.sh.work, nil
	}
	if err := notCapturing(op, s, "its workspace of %d bytes is under the %d cuSPARSE asks for", have, bytes); err != nil {
		return nil, err
	}
	m, err := cuda.AllocAsync(s, max(bytes, 2*have))
	if err != nil {
		return nil, err
	}
	if h.sh.work != nil {
		h.sh.retired = append(h.sh.retired, h.sh.work)
	}
	h.sh.work = m
	return m, nil
}

// notCapturing refuses an allocation while s captures a graph, saying
// why one is needed.
func notCapturing(op string, s *cuda.Stream, why string, args ...any) error {
	capturing, err := s.IsCapturing()
	if err != nil {
		return err
	}
	if capturing {
		return invalid(op, "the stream is capturing a graph, and "+why+": make the call once before the capture", args...)
	}
	return nil
}

// Clone returns another handle to the same cuSPARSE handle, to be closed
// on its own.
func (h *Handle) Clone() (*Handle, error) {
	o, err := h.object().Clone()
	if err != nil {
		return nil, err
	}
	return &Handle{o: o, sh: h.sh}, nil
}

// Close releases this handle, after the calls in flight on it (their
// queuing, not their work on the device); the last Close destroys the
// cuSPARSE handle (cusparseDestroy) and the descriptors it keeps, frees
// the workspace in stream order and releases the stream.
func (h *Handle) Close() error { return h.object().Close() }

// Stream returns the handle's stream, owned by the handle (no Close
// needed), or nil once this handle is closed.
func (h *Handle) Stream() *cuda.Stream { return h.object().Stream() }

// Version returns the version of the cuSPARSE library behind the handle
// (cusparseGetVersion), as CUSPARSE_VERSION spells it: 1000*major +
// 100*minor + patch.
func (h *Handle) Version() (int, error) {
	const op = "Handle.Version"
	var v int32
	err := h.call(op, func(raw cusparse.CusparseHandle_t, _ *cuda.Stream) error {
		return check(op, "cusparseGetVersion", cusparse.GetVersion(raw, &v))
	})
	return int(v), err
}

// open checks that each memory is open: a closed one has no length,
// which the checks of shapes after this would misreport.
func open(op string, mems ...namedMemory) error {
	for _, m := range mems {
		if m.mem == nil || m.mem.Context().Raw() == 0 {
			return fmt.Errorf("sparse: %s: %v: %w", op, m, cuda.ErrClosed)
		}
	}
	return nil
}

// context checks that each memory is open and of the handle's context.
func (h *Handle) context(op string, mems ...namedMemory) error {
	s := h.Stream()
	if s == nil {
		return fmt.Errorf("sparse: %s: handle: %w", op, cuda.ErrClosed)
	}
	want := s.Context().Raw()
	if err := open(op, mems...); err != nil {
		return err
	}
	for _, m := range mems {
		if m.mem.Context().Raw() != want {
			return invalid(op, "%v is memory of another context than the handle's", m)
		}
	}
	return nil
}

// namedMemory is memory with its name for errors: what holds it ("A",
// "x") and, within that, which array ("offsets"). The name is put
// together only for an error.
type namedMemory struct {
	owner, part string
	mem         cuda.Memory
}

func (m namedMemory) String() string {
	if m.part == "" {
		return m.owner
	}
	return m.owner + "'s " + m.part
}
