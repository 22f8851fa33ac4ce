//go:build linux && (amd64 || arm64)

package nccl

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/nccl"
)

// groupWatch stands in for ncclGroupStart, ncclGroupEnd, ncclCommAbort and
// ncclCommDestroy, or wraps NCCL's own, and records a communicator freed
// while a group was open: the real NCCL's ncclGroupEnd would then use
// freed memory.
type groupWatch struct {
	open             atomic.Int32 // ncclGroupStart calls whose ncclGroupEnd has not returned
	aborts, destroys atomic.Int32
	early            atomic.Pointer[string]
}

// install puts the watch around start, end, abort and destroy, and puts
// every stand-in back at the end of the test, where it reports an early
// free.
func (w *groupWatch) install(t *testing.T, start, end func() error, abort, destroy func(nccl.NcclComm_t) error) {
	t.Helper()
	keepStandIns(t)
	t.Cleanup(func() {
		if e := w.early.Load(); e != nil {
			t.Error(*e)
		}
	})
	ncclGroupStart = func() error {
		w.open.Add(1)
		return start()
	}
	ncclGroupEnd = func() error {
		// A window for a free to overlap the end.
		time.Sleep(time.Millisecond)
		err := end()
		w.open.Add(-1)
		return err
	}
	ncclCommAbort = func(c nccl.NcclComm_t) error {
		w.freed("ncclCommAbort")
		w.aborts.Add(1)
		return abort(c)
	}
	ncclCommDestroy = func(c nccl.NcclComm_t) error {
		w.freed("ncclCommDestroy")
		w.destroys.Add(1)
		return destroy(c)
	}
}

func (w *groupWatch) freed(fn string) {
	if n := w.open.Load(); n != 0 {
		e := fmt.Sprintf("%s ran with %d group(s) open: ncclGroupEnd would use the freed communicator", fn, n)
		w.early.CompareAndSwap(nil, &e)
	}
}

// standIn stands in for NCCL with a communicator whose peers answer at
// once: ncclGroupEnd returns end (nil, or ncclInProgress as for a
// non-blocking communicator), and every other call succeeds.
func (w *groupWatch) standIn(t *testing.T, end error) {
	t.Helper()
	ok := func() error { return nil }
	okComm := func(nccl.NcclComm_t) error { return nil }
	w.install(t, ok, func() error { return end }, okComm, okComm)
	ncclCommGetAsyncError = func(_ nccl.NcclComm_t, st *nccl.NcclResult_t) error {
		*st = nccl.NcclSuccess
		return nil
	}
}

func (w *groupWatch) wantFrees(t *testing.T, aborts, destroys int32) {
	t.Helper()
	if a, d := w.aborts.Load(), w.destroys.Load(); a != aborts || d != destroys {
		t.Errorf("ncclCommAbort called %d times and ncclCommDestroy %d times, want %d and %d", a, d, aborts, destroys)
	}
}

// standInComm is a communicator around a handle that only the stand-ins
// see, ended as InitAll's (blocking) or InitRank's (non-blocking) are.
func standInComm(t *testing.T, nonBlocking bool) *Comm {
	t.Helper()
	s := stream(t, 0)
	sh := &commShared{rank: 0, nranks: 2, nonBlocking: nonBlocking, raw: 1, aborted: make(chan struct{}),
		ctx: s.Context().Raw(), device: s.Context().Device().Ordinal()}
	o, err := cuda.NewLibraryObject(s, func() (nccl.NcclComm_t, error) { return 1, nil },
		func(raw nccl.NcclComm_t) error { return destroy(sh, raw) })
	must(t, err)
	if nonBlocking {
		register(sh, 1)
	}
	c := &Comm{o: o, sh: sh}
	t.Cleanup(func() { c.Close() })
	return c
}

// queue makes a collective on c that reaches the stand-ins' NCCL.
func queue(c *Comm) error {
	return c.call("AllReduce", "ncclAllReduce", func(nccl.NcclComm_t, cu.CUstream) error { return nil })
}

// errHangs is what within returns for a function that did not return.
var errHangs = errors.New("still running")

// within runs f on its own goroutine and returns its error. If f has not
// returned after d, the test fails and within returns errHangs, without
// waiting for f any longer.
func within(t *testing.T, what string, d time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Errorf("%s has not returned after %v", what, d)
		return errHangs
	}
}

func kind(nonBlocking bool) string {
	if nonBlocking {
		return "NonBlocking"
	}
	return "Blocking"
}

// An Abort while a group holds the communicator, from another goroutine
// or from the group's own fn: Abort returns while the group is open, the
// communicator's calls fail at once, ncclCommAbort runs only after
// ncclGroupEnd has returned, and Group reports the abort.
func TestAbortDuringAGroupFreesAfterGroupEnd(t *testing.T) {
	for _, nonBlocking := range []bool{false, true} {
		for _, fromFn := range []bool{false, true} {
			name := kind(nonBlocking) + "/FromAnotherGoroutine"
			if fromFn {
				name = kind(nonBlocking) + "/FromFn"
			}
			t.Run(name, func(t *testing.T) {
				var w groupWatch
				end := error(nil)
				if nonBlocking {
					end = nccl.NcclInProgress
				}
				w.standIn(t, end)
				c := standInComm(t, nonBlocking)
				other, err := c.Clone()
				must(t, err)
				abort := func() error { return within(t, "Abort", 2*time.Second, other.Abort) }
				queued, aborted := make(chan struct{}), make(chan error, 1)
				if !fromFn {
					go func() {
						<-queued
						aborted <- other.Abort()
					}()
				}
				err = within(t, "Group", 2*time.Second, func() error {
					return Group(func() error {
						if err := queue(c); err != nil {
							return err
						}
						close(queued)
						var aerr error
						if fromFn {
							aerr = abort()
						} else {
							select {
							case aerr = <-aborted:
							case <-time.After(2 * time.Second):
								t.Error("Abort waits for the group to end")
							}
						}
						if aerr != nil {
							t.Errorf("Abort: %v", aerr)
						}
						wantClosed(t, "a call inside the group after Abort", queue(c))
						return nil
					})
				})
				wantClosed(t, "Group whose communicator was aborted", err)
				w.wantFrees(t, 1, 0)
				wantClosed(t, "a call after the group", queue(c))
			})
		}
	}
}

// The last Close while a group holds the communicator: Close returns, and
// ncclCommDestroy runs only after ncclGroupEnd has returned; the group
// succeeds, as the destroy lets the queued work finish.
func TestLastCloseDuringAGroupDestroysAfterGroupEnd(t *testing.T) {
	for _, nonBlocking := range []bool{false, true} {
		t.Run(kind(nonBlocking), func(t *testing.T) {
			var w groupWatch
			w.standIn(t, nil)
			c := standInComm(t, nonBlocking)
			queued, closed := make(chan struct{}), make(chan error, 1)
			go func() {
				<-queued
				closed <- c.Close()
			}()
			err := within(t, "Group", 2*time.Second, func() error {
				return Group(func() error {
					if err := queue(c); err != nil {
						return err
					}
					close(queued)
					select {
					case err := <-closed:
						if err != nil {
							t.Errorf("Close: %v", err)
						}
					case <-time.After(2 * time.Second):
						t.Error("Close waits for the group to end")
					}
					return nil
				})
			})
			if err != nil {
				t.Errorf("Group whose communicator was closed: %v", err)
			}
			w.wantFrees(t, 0, 1)
		})
	}
}

// Nested Groups are one NCCL group: the abort waits for the outermost end.
func TestAbortDuringNestedGroupsFreesAfterTheOutermostEnd(t *testing.T) {
	var w groupWatch
	w.standIn(t, nil)
	c := standInComm(t, false)
	other, err := c.Clone()
	must(t, err)
	err = within(t, "Group", 2*time.Second, func() error {
		return Group(func() error {
			if err := Group(func() error { return queue(c) }); err != nil {
				t.Errorf("the inner Group: %v", err)
			}
			if err := other.Abort(); err != nil {
				t.Errorf("Abort: %v", err)
			}
			if n := w.aborts.Load(); n != 0 {
				t.Error("ncclCommAbort ran inside the outer group")
			}
			return nil
		})
	})
	wantClosed(t, "the outer Group", err)
	w.wantFrees(t, 1, 0)
}

// A panic in fn still ends the group, and then the aborted communicator.
func TestGroupEndsWhenFnPanics(t *testing.T) {
	var w groupWatch
	w.standIn(t, nil)
	c := standInComm(t, false)
	other, err := c.Clone()
	must(t, err)
	var recovered any
	_ = within(t, "Group", 2*time.Second, func() error {
		defer func() { recovered = recover() }()
		return Group(func() error {
			if err := queue(c); err != nil {
				t.Errorf("the call: %v", err)
			}
			if err := other.Abort(); err != nil {
				t.Errorf("Abort: %v", err)
			}
			panic("fn fails")
		})
	})
	if recovered != "fn fails" {
		t.Errorf("recovered %v, want fn's panic", recovered)
	}
	if n := w.open.Load(); n != 0 {
		t.Errorf("%d group(s) still open after fn's panic", n)
	}
	w.wantFrees(t, 1, 0)
	if currentGroup() != nil || groups.open.Load() != 0 {
		t.Error("the group is still recorded after fn's panic")
	}
}

// A call on another goroutine than the group's is not in the group (NCCL
// keeps a group per thread): the abort of the communicator it used is not
// put off by the group.
func TestAbortOfACommunicatorOutsideTheGroupIsNotPutOff(t *testing.T) {
	var w groupWatch
	w.standIn(t, nil)
	inGroup, outside := standInComm(t, false), standInComm(t, false)
	queuedOutside := make(chan error, 1)
	err := within(t, "Group", 2*time.Second, func() error {
		return Group(func() error {
			if err := queue(inGroup); err != nil {
				return err
			}
			go func() { queuedOutside <- queue(outside) }()
			if err := <-queuedOutside; err != nil {
				t.Errorf("the call outside the group: %v", err)
			}
			if err := outside.Abort(); err != nil {
				t.Errorf("Abort: %v", err)
			}
			return nil
		})
	})
	if w.early.Swap(nil) == nil {
		t.Error("ncclCommAbort of the communicator used outside the group waited for the group's end")
	}
	w.wantFrees(t, 1, 0)
	if err != nil {
		t.Errorf("Group: %v", err)
	}
}

// The same with the fake NCCL's (or NCCL's) own collectives: ranks 0 and 1
// of InitAll all-reduce in one group, and another goroutine aborts rank 0
// while the group is open.
func TestAbortDuringAGroupOfCollectives(t *testing.T) {
	cs := comms(t, 2)
	var w groupWatch
	w.install(t, ncclGroupStart, ncclGroupEnd, ncclCommAbort, ncclCommDestroy)
	xs := make([]*cuda.Slice[float32], len(cs))
	for r, c := range cs {
		xs[r] = upload(t, c, []float32{1, 2, 3})
	}
	other, err := cs[0].Clone()
	must(t, err)
	queued, aborted := make(chan struct{}), make(chan error, 1)
	go func() {
		<-queued
		aborted <- other.Abort()
	}()
	err = within(t, "Group", 5*time.Second, func() error {
		return Group(func() error {
			for r, c := range cs {
				if err := AllReduce(c, xs[r], xs[r], Sum); err != nil {
					return err
				}
			}
			close(queued)
			select {
			case err := <-aborted:
				if err != nil {
					t.Errorf("Abort: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Error("Abort waits for the group to end")
			}
			wantClosed(t, "AllReduce inside the group after Abort", AllReduce(cs[0], xs[0], xs[0], Sum))
			return nil
		})
	})
	wantClosed(t, "Group whose rank 0 was aborted", err)
	w.wantFrees(t, 1, 0)
	wantClosed(t, "AllReduce after the group", AllReduce(cs[0], xs[0], xs[0], Sum))
	// The other ranks' collective ends, with or without rank 0's part.
	for r, c := range cs[1:] {
		if err := within(t, "Synchronize", 5*time.Second, c.Stream().Synchronize); err != nil {
			t.Errorf("rank %d's stream: %v", r+1, err)
		}
	}
	if err := cs[1].AsyncError(); errors.Is(err, cuda.ErrClosed) {
		t.Errorf("rank 1 reads as aborted: %v", err)
	}
}
