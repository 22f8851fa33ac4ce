//go:build linux && (amd64 || arm64)

package nccl

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/gocuda/gocuda/generated/nccl"
)

// NCCL keeps a group per thread: a call queued between ncclGroupStart and
// ncclGroupEnd leaves its communicator in the thread's group, and
// ncclGroupEnd uses it. If the communicator were freed in between
// (ncclCommAbort, or ncclCommDestroy at the last Close), ncclGroupEnd would
// use freed memory. So an open group holds the communicators its calls
// used, and the free of one that is held waits for the end of the last
// group holding it (its ncclGroupEnd returned), run there. The
// communicator is marked gone at once all the same, so that no call
// reaches NCCL after Abort, and its waits end at once, so that Abort still
// ends a wait for a peer that never answers. Abort does not wait for the
// group: fn may be waiting for what follows the Abort, or be calling it.

// group is the NCCL group open on one thread. Group keeps its goroutine on
// that thread until the group has ended, and a locked thread runs no other
// goroutine, so only that goroutine finds it and changes it.
type group struct {
	tid   int
	depth int           // Groups nested on the thread
	comms []*commShared // held, each once
}

// groups are the groups open, by thread.
var groups struct {
	// open counts them: calls made outside every group, most of them,
	// skip the look-up while there are none.
	open     atomic.Int32
	mu       sync.Mutex
	byThread map[int]*group
}

// openGroup records a group begun on the calling goroutine's thread, which
// must be locked to it, or one level more of the group open there.
func openGroup() *group {
	tid := syscall.Gettid()
	groups.mu.Lock()
	defer groups.mu.Unlock()
	g := groups.byThread[tid]
	if g == nil {
		if groups.byThread == nil {
			groups.byThread = map[int]*group{}
		}
		g = &group{tid: tid}
		groups.byThread[tid] = g
		groups.open.Add(1)
	}
	g.depth++
	return g
}

// currentGroup is the group open on the calling goroutine's thread, nil
// outside Group.
func currentGroup() *group {
	if groups.open.Load() == 0 {
		return nil
	}
	tid := syscall.Gettid()
	groups.mu.Lock()
	defer groups.mu.Unlock()
	return groups.byThread[tid]
}

// close ends one level of g, after its ncclGroupEnd has returned. At the
// outermost level it lets go of g's communicators and runs the frees that
// waited for it, returning their errors.
func (g *group) close() (outermost bool, err error) {
	groups.mu.Lock()
	g.depth--
	if g.depth > 0 {
		groups.mu.Unlock()
		return false, nil
	}
	delete(groups.byThread, g.tid)
	groups.open.Add(-1)
	groups.mu.Unlock()
	for _, sh := range g.comms {
		err = errors.Join(err, sh.leave())
	}
	return true, err
}

// aborted reports whether a communicator of g was aborted.
func (g *group) aborted() bool {
	for _, sh := range g.comms {
		if sh.wasAborted.Load() {
			return true
		}
	}
	return false
}

// join is what a call on sh checks before NCCL: it fails once sh is gone,
// and inside Group it adds sh to the group's hold.
func (sh *commShared) join() error {
	g := currentGroup()
	if g == nil {
		if sh.gone.Load() {
			return errAborted
		}
		return nil
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.gone.Load() {
		return errAborted
	}
	if !slices.Contains(g.comms, sh) {
		g.comms = append(g.comms, sh)
		sh.groups++
	}
	return nil
}

// leave ends a group's hold of sh; the last one runs the free that waited.
func (sh *commShared) leave() error {
	sh.mu.Lock()
	sh.groups--
	var free func() error
	if sh.groups == 0 {
		free, sh.freeLater = sh.freeLater, nil
	}
	sh.mu.Unlock()
	if free == nil {
		return nil
	}
	return free()
}

// retire marks the communicator gone, so that no call reaches NCCL after;
// aborted says that Abort ends it, not the last Close. It returns false if
// the communicator was gone already.
func (sh *commShared) retire(aborted bool) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.gone.Load() {
		return false
	}
	sh.gone.Store(true)
	sh.wasAborted.Store(aborted)
	return true
}

// release frees NCCL's communicator, retired already, with free
// (ncclCommAbort or ncclCommDestroy): now, returning free's error, or, while
// groups hold it, at the end of the last of them, whose Group returns the
// error.
func (sh *commShared) release(free func() error) error {
	sh.mu.Lock()
	if sh.groups > 0 {
		sh.freeLater = free
		sh.mu.Unlock()
		return nil
	}
	sh.mu.Unlock()
	return free()
}

// Group queues the collectives fn makes, of one communicator or of several,
// as one (ncclGroupStart, ncclGroupEnd): NCCL starts them together when fn
// returns. fn must make its calls from the goroutine that called Group
// (NCCL keeps the group per thread; Group holds the goroutine on its
// thread meanwhile). If fn fails, or panics, the group is still ended, and
// fn's error returned (or its panic let go on).
//
// The communicators that fn's calls used stay allocated in NCCL until the
// group has ended, the outermost of nested Groups: an Abort or a last
// Close meanwhile, from any goroutine or from fn, takes effect at once for
// the calls (they fail with an error matching cuda.ErrClosed, and their
// waits end) and returns without waiting for the group, but NCCL frees the
// communicator only once ncclGroupEnd has returned. Group then returns an
// error matching cuda.ErrClosed if one of them was aborted before it
// returned, with the error of that ncclCommAbort or ncclCommDestroy if it
// failed.
func Group(fn func() error) error {
	if fn == nil {
		return fmt.Errorf("nccl: Group: nil function: %w", nccl.NcclInvalidArgument)
	}
	return inGroup(func() error {
		if err := ncclGroupStart(); err != nil {
			return ncclError("Group", "ncclGroupStart", err, 0)
		}
		g := openGroup()
		ended := false
		defer func() {
			if !ended {
				// fn panicked. Unended, the group would keep its
				// communicators from being freed, and NCCL's group
				// would stay open on a thread that Go hands on.
				_, _, _ = endGroup(g)
			}
		}()
		ferr := fn()
		ended = true
		err, outermost, freeErr := endGroup(g)
		if errors.Is(err, nccl.NcclInProgress) {
			err = settleAll()
		}
		switch {
		case ferr != nil:
			err = ferr
		case err != nil:
			err = ncclError("Group", "ncclGroupEnd", err, 0)
		case outermost && g.aborted():
			err = closedErr("Group (a communicator of the group was aborted)")
		}
		if freeErr != nil {
			err = errors.Join(err, freeErr)
		}
		return err
	})
}

// endGroup ends NCCL's group (ncclGroupEnd), then g's level of it.
func endGroup(g *group) (end error, outermost bool, freeErr error) {
	abortGate.RLock()
	end = ncclGroupEnd()
	abortGate.RUnlock()
	outermost, freeErr = g.close()
	return end, outermost, freeErr
}

// inGroup runs fn on one OS thread: NCCL keeps its group state per thread.
func inGroup(fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return fn()
}
