package cuda

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocuda/gocuda/generated/cu"
)

// fakeLibrary stands in for a library such as cuBLAS: it makes numbered
// objects, checks that a context is current whenever it is called, and
// records what happened to them.
type fakeLibrary struct {
	next      atomic.Int64
	destroyed sync.Map // raw → number of destroys
	inCall    atomic.Int64
	noContext atomic.Int64 // calls made with no context current
}

func (l *fakeLibrary) current() {
	var c cu.CUcontext
	if cu.CtxGetCurrent(&c) != nil || c == 0 {
		l.noContext.Add(1)
	}
}

func (l *fakeLibrary) create() (int64, error) {
	l.current()
	return l.next.Add(1), nil
}

func (l *fakeLibrary) destroy(raw int64) error {
	l.current()
	if l.inCall.Load() != 0 {
		return errors.New("destroyed during a call")
	}
	n, _ := l.destroyed.LoadOrStore(raw, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	return nil
}

func (l *fakeLibrary) destroys(raw int64) int64 {
	n, ok := l.destroyed.Load(raw)
	if !ok {
		return 0
	}
	return n.(*atomic.Int64).Load()
}

func TestLibraryObjectLastCloseDestroysOnceAndReleasesItsStream(t *testing.T) {
	_, ctx := needGPU(t)
	before := LiveObjects()
	s, err := NewStream(ctx)
	must(t, err)
	lib := &fakeLibrary{}
	o, err := NewLibraryObject(s, lib.create, lib.destroy)
	must(t, err)
	// The object holds its own clone: the user's stream may go first.
	must(t, s.Close())
	c, err := o.Clone()
	must(t, err)
	if o.Stream() == nil || o.Stream().Raw() == 0 {
		t.Fatal("the object has no stream")
	}
	var raw int64
	must(t, o.Call("test", func(r int64) error { raw = r; lib.current(); return nil }))
	must(t, o.Close())
	if lib.destroys(raw) != 0 {
		t.Fatal("destroyed while a clone is open")
	}
	if err := o.Call("test", func(int64) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Call after Close = %v, want ErrClosed", err)
	}
	if o.Stream() != nil {
		t.Fatal("a closed handle still gives its stream")
	}
	must(t, c.Close())
	if lib.destroys(raw) != 1 {
		t.Fatalf("destroyed %d times, want once", lib.destroys(raw))
	}
	if n := lib.noContext.Load(); n != 0 {
		t.Fatalf("%d library calls ran without a current context", n)
	}
	if after := LiveObjects(); after.LibraryObjects != before.LibraryObjects || after.Streams != before.Streams {
		t.Fatalf("live objects %+v after, %+v before", after, before)
	}
}

func TestLibraryObjectCallHoldsItsArguments(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	lib := &fakeLibrary{}
	o, err := NewLibraryObject(s, lib.create, lib.destroy)
	must(t, err)
	defer o.Close()
	m, err := Alloc(ctx, 64)
	must(t, err)
	closed, err := Alloc(ctx, 64)
	must(t, err)
	must(t, closed.Close())
	var nilMem *DeviceMemory
	for i, args := range [][]Holder{{closed}, {m, nilMem}, {m, nil}} {
		called := false
		err := o.Call("test", func(int64) error { called = true; return nil }, args...)
		if !errors.Is(err, ErrClosed) || called {
			t.Errorf("case %d: Call = %v (fn called: %v), want ErrClosed and no call", i, err, called)
		}
	}
	// Close of an argument waits for the call that holds it.
	entered, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	live := LiveObjects().DeviceMemory
	go func() {
		done <- o.Call("test", func(int64) error {
			close(entered)
			<-release
			if LiveObjects().DeviceMemory != live {
				return errors.New("the memory was freed during the call")
			}
			return nil
		}, m)
	}()
	<-entered
	closedAt := make(chan struct{})
	go func() { _ = m.Close(); close(closedAt) }()
	select {
	case <-closedAt:
		t.Fatal("Close of held memory returned during the call")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	must(t, <-done)
	<-closedAt
	sentinel := errors.New("library error")
	if err := o.Call("test", func(int64) error { return sentinel }); err != sentinel {
		t.Fatalf("Call = %v, want fn's error as it is", err)
	}
}

// TestLibraryObjectCloseWaitsForCalls races Close against calls from many
// goroutines: the object is never destroyed under a call, and once.
func TestLibraryObjectCloseWaitsForCalls(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	lib := &fakeLibrary{}
	for range 20 {
		o, err := NewLibraryObject(s, lib.create, lib.destroy)
		must(t, err)
		var wg sync.WaitGroup
		var raw atomic.Int64
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					err := o.Call("test", func(r int64) error {
						lib.inCall.Add(1)
						defer lib.inCall.Add(-1)
						raw.Store(r)
						time.Sleep(10 * time.Microsecond)
						return nil
					})
					if errors.Is(err, ErrClosed) {
						return
					}
					must(t, err)
				}
			}()
		}
		time.Sleep(time.Millisecond)
		must(t, o.Close())
		wg.Wait()
		if r := raw.Load(); r != 0 && lib.destroys(r) != 1 {
			t.Fatalf("object %d destroyed %d times", r, lib.destroys(r))
		}
	}
}

func TestNewLibraryObjectCreateErrorLeavesNothing(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	before := LiveObjects()
	sentinel := errors.New("no library")
	_, err = NewLibraryObject(s, func() (int64, error) { return 0, sentinel }, func(int64) error { return nil })
	if !errors.Is(err, sentinel) {
		t.Fatalf("NewLibraryObject = %v, want create's error", err)
	}
	if after := LiveObjects(); after != before {
		t.Fatalf("live objects %+v after, %+v before", after, before)
	}
}

func TestLibraryObjectSetStreamMovesItAndReleasesTheOldStream(t *testing.T) {
	_, ctx := needGPU(t)
	before := LiveObjects()
	s1, err := NewStream(ctx)
	must(t, err)
	s2, err := NewStream(ctx)
	must(t, err)
	lib := &fakeLibrary{}
	o, err := NewLibraryObject(s1, lib.create, lib.destroy)
	must(t, err)
	must(t, s1.Close()) // the object's clone keeps s1 alive
	var told cu.CUstream
	must(t, o.SetStream("test", s2, func(_ int64, s cu.CUstream) error { told = s; return nil }))
	if told != s2.Raw() || o.Stream().Raw() != s2.Raw() {
		t.Fatalf("told %v, stream %v, want %v", told, o.Stream().Raw(), s2.Raw())
	}
	var onStream cu.CUstream
	must(t, o.CallOnStream("test", func(_ int64, s cu.CUstream) error { onStream = s; return nil }))
	if onStream != s2.Raw() {
		t.Fatalf("CallOnStream got %v, want %v", onStream, s2.Raw())
	}
	// s1's last reference was the object's: moving released it.
	if got := LiveObjects().Streams; got != before.Streams+1 {
		t.Fatalf("%d streams live, want %d (s2 only)", got, before.Streams+1)
	}
	sentinel := errors.New("library refused")
	if err := o.SetStream("test", s2, func(int64, cu.CUstream) error { return sentinel }); err != sentinel {
		t.Fatalf("SetStream = %v, want the library's error", err)
	}
	if err := o.SetStream("test", nil, func(int64, cu.CUstream) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("SetStream(nil) = %v, want ErrClosed", err)
	}
	// Calls and moves from many goroutines: run with -race.
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if i == 0 {
					must(t, o.SetStream("test", s2, func(int64, cu.CUstream) error { return nil }))
					continue
				}
				must(t, o.CallOnStream("test", func(_ int64, s cu.CUstream) error {
					if s != s2.Raw() {
						return errors.New("a call saw another stream")
					}
					return nil
				}))
				must(t, o.Exclusive("test", func(int64) error { return nil }))
			}
		}()
	}
	wg.Wait()
	must(t, o.Close())
	must(t, s2.Close())
	if after := LiveObjects(); after.Streams != before.Streams || after.LibraryObjects != before.LibraryObjects {
		t.Fatalf("live objects %+v after, %+v before", after, before)
	}
}
