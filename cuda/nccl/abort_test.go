//go:build linux && (amd64 || arm64)

package nccl

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/nccl"
)

// peerNeverAnswers stands in for NCCL with a communicator whose peer never
// answers: every operation stays in progress, until ncclCommAbort (or
// until the test gives up on the code under test, so that a failing test
// ends). It counts the aborts, and records a poll of an aborted
// communicator or an abort while another call is inside "NCCL", which the
// abort gate forbids.
type peerNeverAnswers struct {
	aborts, inside    atomic.Int32
	aborted, answered atomic.Bool
	violation         atomic.Pointer[string]
}

// keepStandIns puts every NCCL stand-in back as it was when the test ends,
// whatever the test put in its place.
func keepStandIns(t *testing.T) {
	t.Helper()
	getAsync, abort, destroy, finalize := ncclCommGetAsyncError, ncclCommAbort, ncclCommDestroy, ncclCommFinalize
	start, end := ncclGroupStart, ncclGroupEnd
	t.Cleanup(func() {
		ncclCommGetAsyncError, ncclCommAbort, ncclCommDestroy, ncclCommFinalize = getAsync, abort, destroy, finalize
		ncclGroupStart, ncclGroupEnd = start, end
	})
}

func (p *peerNeverAnswers) install(t *testing.T) {
	t.Helper()
	keepStandIns(t)
	t.Cleanup(func() {
		if v := p.violation.Load(); v != nil {
			t.Error(*v)
		}
	})
	ncclCommGetAsyncError = func(_ nccl.NcclComm_t, st *nccl.NcclResult_t) error {
		p.inside.Add(1)
		defer p.inside.Add(-1)
		if p.aborted.Load() {
			p.violate("ncclCommGetAsyncError on an aborted communicator")
		}
		time.Sleep(50 * time.Microsecond) // a window for an abort to overlap
		*st = nccl.NcclInProgress
		if p.answered.Load() {
			*st = nccl.NcclSuccess
		}
		return nil
	}
	ncclCommAbort = func(nccl.NcclComm_t) error {
		if p.inside.Load() != 0 {
			p.violate("ncclCommAbort while another call was inside NCCL")
		}
		p.aborted.Store(true)
		p.aborts.Add(1)
		return nil
	}
	ncclCommFinalize = func(nccl.NcclComm_t) error { return nccl.NcclInProgress }
	ncclGroupStart = func() error { return nil }
	ncclGroupEnd = func() error { return nccl.NcclInProgress }
}

func (p *peerNeverAnswers) violate(what string) { p.violation.CompareAndSwap(nil, &what) }

// nonBlockingComm is a registered non-blocking communicator, as InitRank
// makes one, around a handle that only the stand-ins see.
func nonBlockingComm(t *testing.T) *Comm {
	t.Helper()
	s := stream(t, 0)
	sh := &commShared{rank: 0, nranks: 2, nonBlocking: true, raw: 1, aborted: make(chan struct{}),
		ctx: s.Context().Raw(), device: s.Context().Device().Ordinal()}
	o, err := cuda.NewLibraryObject(s, func() (nccl.NcclComm_t, error) { return 1, nil },
		func(nccl.NcclComm_t) error {
			unregister(sh)
			sh.gone.Store(true)
			return nil
		})
	must(t, err)
	register(sh, 1)
	c := &Comm{o: o, sh: sh}
	t.Cleanup(func() { c.Close() })
	return c
}

// returnsWithin runs f on its own goroutine and returns its error. If f is
// still running after d, the test fails and the peer answers at last, so
// that f and the test end.
func (p *peerNeverAnswers) returnsWithin(t *testing.T, what string, d time.Duration, f func() error) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	out := make(chan error, 1)
	go func() {
		select {
		case err := <-done:
			out <- err
		case <-time.After(d):
			t.Errorf("%s is still waiting for the peer after %v", what, d)
			p.answered.Store(true)
			out <- <-done
		}
	}()
	return out
}

// stillWaiting fails the test if the call behind done has returned: it is
// meant to wait for the peer.
func stillWaiting(t *testing.T, what string, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("%s returned (%v) while its peer had not answered", what, err)
	case <-time.After(30 * time.Millisecond):
	}
}

// abortEnds starts wait, checks that it waits for the peer, calls abort
// (an Abort) and returns wait's error once it has ended.
func (p *peerNeverAnswers) abortEnds(t *testing.T, what string, wait, abort func() error) error {
	t.Helper()
	done := p.returnsWithin(t, what, 2*time.Second, wait)
	stillWaiting(t, what, done)
	if err := <-p.returnsWithin(t, "Abort", 2*time.Second, abort); err != nil {
		t.Errorf("Abort: %v", err)
	}
	return <-done
}

func (p *peerNeverAnswers) wantOneAbort(t *testing.T) {
	t.Helper()
	if n := p.aborts.Load(); n != 1 {
		t.Errorf("ncclCommAbort called %d times, want 1", n)
	}
}

func TestAbortEndsACallWaitingForAPeer(t *testing.T) {
	var p peerNeverAnswers
	p.install(t)
	c := nonBlockingComm(t)
	other, err := c.Clone()
	must(t, err)
	err = p.abortEnds(t, "the call", func() error {
		return c.call("AllReduce", "ncclAllReduce", func(nccl.NcclComm_t, cu.CUstream) error { return nccl.NcclInProgress })
	}, other.Abort)
	wantClosed(t, "the call ended by Abort", err)
	p.wantOneAbort(t)
	err = c.call("AllReduce", "ncclAllReduce", func(nccl.NcclComm_t, cu.CUstream) error {
		t.Error("a call after Abort reached NCCL")
		return nil
	})
	wantClosed(t, "a call after Abort", err)
}

func TestAbortEndsAGroupWaitingForAPeer(t *testing.T) {
	var p peerNeverAnswers
	p.install(t)
	c := nonBlockingComm(t)
	err := p.abortEnds(t, "Group", func() error { return Group(func() error { return nil }) }, c.Abort)
	// The aborted communicator no longer holds the group up.
	if err != nil {
		t.Errorf("Group after the abort: %v", err)
	}
	p.wantOneAbort(t)
}

func TestAbortEndsAShutdownWaitingForAPeer(t *testing.T) {
	var p peerNeverAnswers
	p.install(t)
	c := nonBlockingComm(t)
	other, err := c.Clone()
	must(t, err)
	err = p.abortEnds(t, "Shutdown", func() error { return c.Shutdown(context.Background()) }, other.Abort)
	wantClosed(t, "Shutdown ended by Abort", err)
	p.wantOneAbort(t)
}

func TestShutdownAbortsWhenItsContextIsDone(t *testing.T) {
	var p peerNeverAnswers
	p.install(t)
	c := nonBlockingComm(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := <-p.returnsWithin(t, "Shutdown", 2*time.Second, func() error { return c.Shutdown(ctx) })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown past its deadline: %v, want an error matching context.DeadlineExceeded", err)
	}
	p.wantOneAbort(t)
}

// Abort frees the communicator only when no call is inside NCCL on it, and
// no call reaches NCCL after: with goroutines polling it (AsyncError) all
// along, the stand-ins see neither.
func TestAbortWaitsForTheCallsInsideNCCL(t *testing.T) {
	var p peerNeverAnswers
	p.install(t)
	c := nonBlockingComm(t)
	const pollers = 4
	ended := make(chan error, pollers)
	for range pollers {
		h, err := c.Clone()
		must(t, err)
		go func() {
			defer h.Close()
			for {
				if err := h.AsyncError(); err != nil {
					ended <- err
					return
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	if err := <-p.returnsWithin(t, "Abort", 2*time.Second, c.Abort); err != nil {
		t.Errorf("Abort: %v", err)
	}
	for range pollers {
		select {
		case err := <-ended:
			wantClosed(t, "AsyncError after Abort", err)
		case <-time.After(2 * time.Second):
			t.Fatal("a poller is still calling AsyncError after Abort")
		}
	}
}
