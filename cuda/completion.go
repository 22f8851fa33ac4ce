package cuda

/*
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include "zfused.h"
#include <stdlib.h>
#include <unistd.h>

// Completions of host functions enqueued by Stream.Then and Stream.Done.
// The host function the driver calls is this C function: it records the
// token, writes a byte to a pipe if the queue was empty, and returns at
// once. No Go code runs on the driver's thread, so a Go callback can
// neither block the stream nor panic into the driver; a goroutine of this
// package reads the pipe and delivers the tokens.
static pthread_mutex_t gocuda_done_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *gocuda_done_q;
static size_t gocuda_done_n, gocuda_done_cap;
static int gocuda_done_wfd = -1;

static void gocuda_host_done(void *arg) {
	pthread_mutex_lock(&gocuda_done_mu);
	if (gocuda_done_n == gocuda_done_cap) {
		size_t cap = gocuda_done_cap ? 2 * gocuda_done_cap : 64;
		uint64_t *q = realloc(gocuda_done_q, cap * sizeof *q);
		if (q == NULL)
			abort();
		gocuda_done_q = q;
		gocuda_done_cap = cap;
	}
	int first = gocuda_done_n == 0;
	gocuda_done_q[gocuda_done_n++] = (uint64_t)(uintptr_t)arg;
	pthread_mutex_unlock(&gocuda_done_mu);
	// The reader empties the queue after each wake-up (it takes until
	// nothing is left), so a token that finds others queued has the
	// wake-up of the first of them to come: one write per batch keeps the
	// system call off the driver's thread for every completion but the
	// first. A full pipe already holds a wake-up.
	if (!first)
		return;
	char b = 1;
	ssize_t r;
	do
		r = write(gocuda_done_wfd, &b, 1);
	while (r < 0 && errno == EINTR);
}

static void gocuda_done_init(int wfd) { gocuda_done_wfd = wfd; }

// gocuda_host_done_addr is the host function's address, which names its
// completions to a driver that checks for races (internal/hostorder).
static uintptr_t gocuda_host_done_addr(void) { return (uintptr_t)gocuda_host_done; }

// gocuda_done_wake wakes the reader without a token, to look at what is
// pending again.
static void gocuda_done_wake(void) {
	char b = 0;
	ssize_t r;
	do
		r = write(gocuda_done_wfd, &b, 1);
	while (r < 0 && errno == EINTR);
}

// gocuda_done_take moves up to n completed tokens into out and returns how
// many.
static size_t gocuda_done_take(uint64_t *out, size_t n) {
	pthread_mutex_lock(&gocuda_done_mu);
	size_t k = gocuda_done_n < n ? gocuda_done_n : n;
	for (size_t i = 0; i < k; i++)
		out[i] = gocuda_done_q[i];
	for (size_t i = k; i < gocuda_done_n; i++)
		gocuda_done_q[i - k] = gocuda_done_q[i];
	gocuda_done_n -= k;
	pthread_mutex_unlock(&gocuda_done_mu);
	return k;
}

// cuLaunchHostFunc(stream, gocuda_host_done, token).
static int gocuda_enqueue_done(uintptr_t fn, uintptr_t stream, uint64_t token) {
	return ((gocuda_cuLaunchHostFunc_fn)fn)(stream, (uintptr_t)gocuda_host_done, (void *)(uintptr_t)token);
}
*/
import "C"

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/hostorder"
)

// completions maps the tokens of host functions not yet completed to what
// their completion delivers; the dispatcher goroutine runs while there are
// any, and exits when there are none, so an idle program keeps none. The
// dispatcher runs no user code: it closes channels and hands functions of
// Then to their stream's queue, which a goroutine of its own runs while
// it holds any, so that a function that blocks holds back its own stream
// alone.
var completions struct {
	sync.Mutex
	next    uint64
	pending map[uint64]completion
	queues  map[cu.CUstream]*thenQueue // by driver stream, whatever its handles
	running bool                       // a dispatcher goroutine is reading
	pipe    *os.File                   // read end of the wake-up pipe, made on first use
	err     error
}

// A completion is a channel to close or a function to run, and a
// reference on the stream whose host function delivers it. The reference
// keeps the stream from being destroyed while the completion is pending,
// so that the dispatcher can always ask the driver about it (failedStreams).
type completion struct {
	stream *shared[streamState]
	done   chan struct{}
	fn     func()
	token  uint64 // the host function's argument, set once it is enqueued
	// direct: done is closed as soon as it is delivered, not after the
	// functions of Then delivered before it (WaitIdle's, and Done's in a
	// function of Then of the same stream, which would wait for itself).
	direct bool
}

// A thenQueue is what a stream's completions delivered while functions of
// Then of the stream were waiting or running, in stream order: functions
// and the channels of Done behind them. runThens runs it.
type thenQueue struct {
	items  []completion
	runner uint64 // the id of the goroutine that runs it (goid)
}

// A host function is never called once its context has failed (cuda.h: it
// "will not be called in the event of an error in the CUDA context"), a
// kernel's fault say, and nothing reports that to it. So while completions
// are pending, the dispatcher asks the driver about their streams now and
// then, only to find such failures: first faultPollMin after it starts, and
// then at intervals that double up to faultPollMax. Work that completes
// sooner is never asked about; a long wait costs two driver calls per
// stream a second. A failure is thus seen within about a second of its
// cause, however long the dispatcher has run.
const (
	faultPollMin = 10 * time.Millisecond
	faultPollMax = time.Second
)

// faultQueries counts the driver queries of the fault polls, so that tests
// can tell them from a waiter's.
var faultQueries atomic.Int64

// captureBegin keeps the fault poll from querying a stream that is starting
// a capture (Stream.BeginCapture holds it for reading): a query of a
// capturing stream would invalidate its capture.
var captureBegin sync.RWMutex

var hostFuncProc = sync.OnceValues(func() (uintptr, error) { return cu.Proc("cuLaunchHostFunc") })

// enqueueCompletion enqueues on s a host function that delivers c once the
// work enqueued before it has completed.
func (s *Stream) enqueueCompletion(op string, c completion) error {
	h := s.handle()
	st, ok := h.enter()
	if !ok {
		return h.closedError(op)
	}
	defer h.exit()
	fn, err := hostFuncProc()
	if err != nil {
		return newError(op, "cuLaunchHostFunc", err)
	}
	// In a capture the host function would become a graph node, run once
	// per launch of the graph, or never.
	var status cu.CUstreamCaptureStatus
	if err := cu.StreamIsCapturing(st.raw, &status); err != nil {
		return newError(op, "cuStreamIsCapturing", err)
	}
	if status != cu.CU_STREAM_CAPTURE_STATUS_NONE {
		return &Error{Op: op, Result: cu.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, Err: fmt.Errorf(
			"the stream is capturing into a graph: a completion cannot be captured: %w", cu.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)}
	}
	// This handle's reference is held until exit: the completion's own
	// cannot be refused, and giving it back on an error below is never
	// the last release.
	if !h.core.acquire() {
		return closedError(op)
	}
	c.stream = h.core
	completions.Lock()
	if err := openCompletionPipe(); err != nil {
		completions.Unlock()
		_ = h.core.release()
		return &Error{Op: op, Err: err}
	}
	completions.next++
	token := completions.next
	completions.pending[token] = c
	completions.Unlock()
	r := C.gocuda_enqueue_done(C.uintptr_t(fn), C.uintptr_t(st.raw), C.uint64_t(token))
	completions.Lock()
	defer completions.Unlock()
	if r != 0 {
		delete(completions.pending, token)
		// A running dispatcher may be reading the pipe for this token
		// alone: woken, it finds nothing pending and exits.
		if completions.running {
			C.gocuda_done_wake()
		}
		_ = h.core.release()
		return newError(op, "cuLaunchHostFunc", cu.CUresult(r))
	}
	// The dispatcher starts only for a token the driver will complete: one
	// started for a launch that then failed would wait on the pipe for
	// nothing. A running one does not exit while token is pending.
	if !completions.running {
		completions.running = true
		go dispatchCompletions(completions.pipe)
	}
	return nil
}

// openCompletionPipe makes the wake-up pipe once; completions is locked.
func openCompletionPipe() error {
	if completions.pipe != nil || completions.err != nil {
		return completions.err
	}
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		completions.err = fmt.Errorf("completion pipe: %w", err)
		return completions.err
	}
	// The read end is non-blocking, so the os.File reads it through the
	// runtime's poller: the dispatcher waits without holding a thread.
	completions.pipe = os.NewFile(uintptr(p[0]), "gocuda-completions")
	completions.pending = map[uint64]completion{}
	completions.queues = map[cu.CUstream]*thenQueue{}
	C.gocuda_done_init(C.int(p[1]))
	return nil
}

// dispatchCompletions delivers completed tokens until none is pending.
// The read of the pipe times out for the fault polls.
func dispatchCompletions(pipe *os.File) {
	var buf [64]byte
	var tokens [len(deliverBatch)]uint64
	interval := faultPollMin
	setPollDeadline(pipe, interval)
	for {
		completions.Lock()
		if len(completions.pending) == 0 {
			completions.running = false
			completions.Unlock()
			return
		}
		completions.Unlock()
		var failed map[*shared[streamState]]bool
		_, err := pipe.Read(buf[:])
		switch {
		case err == nil, errors.Is(err, syscall.EAGAIN):
		case errors.Is(err, os.ErrDeadlineExceeded):
			failed = failedStreams()
			interval = min(2*interval, faultPollMax)
			setPollDeadline(pipe, interval)
		default:
			panic("cuda: completion pipe: " + err.Error())
		}
		// What the driver completed before a failure is delivered before
		// the rest is dropped. The queue is taken until it is empty, as
		// a host function writes to the pipe only when it finds it so.
		for {
			n := int(C.gocuda_done_take((*C.uint64_t)(unsafe.Pointer(&tokens[0])), C.size_t(len(tokens))))
			if n == 0 {
				break
			}
			deliverAll(tokens[:n])
		}
		if failed != nil {
			dropCompletions(failed)
		}
	}
}

func setPollDeadline(pipe *os.File, d time.Duration) {
	// The pipe is non-blocking, so the poller reads it and deadlines work.
	if err := pipe.SetReadDeadline(time.Now().Add(d)); err != nil {
		panic("cuda: completion pipe: " + err.Error())
	}
}

// deliverBatch is deliverAll's scratch space. Only the dispatcher uses it,
// and one runs at a time; it outlives each, as a dispatcher starts again
// whenever completions become pending after none were.
var deliverBatch [256]completion

// deliverAll delivers the completions of tokens, at most len(deliverBatch),
// in order. They are taken out of pending under one lock for the whole
// batch, not one per token.
func deliverAll(tokens []uint64) {
	batch := deliverBatch[:0]
	completions.Lock()
	for _, t := range tokens {
		c, ok := completions.pending[t]
		if !ok {
			continue // dropped after its stream failed
		}
		delete(completions.pending, t)
		c.token = t
		batch = append(batch, c)
	}
	completions.Unlock()
	for i := range batch {
		c := batch[i]
		batch[i] = completion{} // holds nothing once delivered
		raw := c.stream.val.raw
		// The stream goes first, so that a Close after the delivery
		// destroys it at once. A failed destroy has nobody to be reported
		// to, as a dropped handle's; a refused one is deferred.
		_ = c.stream.release()
		c.stream = nil
		handOver(raw, c)
	}
}

// handOver closes the channel of c, a completion of the stream raw, or
// queues it behind the functions of Then that the stream's queue holds;
// a function of Then is queued, and the queue's goroutine started if it
// has none.
func handOver(raw cu.CUstream, c completion) {
	completions.Lock()
	q := completions.queues[raw]
	if c.fn == nil && (q == nil || c.direct) {
		completions.Unlock()
		close(c.done)
		return
	}
	start := q == nil
	if start {
		q = &thenQueue{}
		completions.queues[raw] = q
	}
	q.items = append(q.items, c)
	completions.Unlock()
	if start {
		go runThens(raw, q)
	}
}

// runThens runs the queue q of the stream raw until it is empty, and then
// forgets it. A panic in a function ends the program from this goroutine,
// as a panic in any goroutine does, and never reaches the driver.
func runThens(raw cu.CUstream, q *thenQueue) {
	id := goid()
	completions.Lock()
	q.runner = id
	for len(q.items) > 0 {
		c := q.items[0]
		q.items[0] = completion{}
		q.items = q.items[1:]
		completions.Unlock()
		if c.fn != nil {
			runThen(raw, q, c)
		} else {
			close(c.done)
		}
		completions.Lock()
	}
	delete(completions.queues, raw)
	completions.Unlock()
}

// runThen runs fn. If fn ends the goroutine instead of returning
// (runtime.Goexit, as t.FailNow does), a new one takes over the queue, so
// that the later completions of the stream are not lost.
func runThen(raw cu.CUstream, q *thenQueue, c completion) {
	returned := false
	defer func() {
		if !returned {
			go runThens(raw, q)
		}
	}()
	hostorder.Then(uintptr(C.gocuda_host_done_addr()), uintptr(c.token), c.fn)
	returned = true
}

// inThenOf reports whether the caller is a function of Then of the stream
// raw (or something it calls), run by the goroutine of the stream's queue.
func inThenOf(raw cu.CUstream) bool {
	completions.Lock()
	q := completions.queues[raw]
	var runner uint64
	if q != nil {
		runner = q.runner
	}
	completions.Unlock()
	// A goroutine that is not the runner cannot become it meanwhile; the
	// runner's id, set before it runs anything, is not 0.
	return q != nil && runner == goid()
}

// goid returns the calling goroutine's id, which the runtime gives only in
// the first line of a stack trace: "goroutine 18 [running]:". Ids are
// never reused.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	var id uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		id = 10*id + uint64(c-'0')
	}
	return id
}

// failedStreams asks the driver about each stream with a completion
// pending and returns those that report an error: their context has
// failed, and the driver will call none of their host functions.
func failedStreams() map[*shared[streamState]]bool {
	completions.Lock()
	streams := make(map[*shared[streamState]]bool)
	for _, c := range completions.pending {
		// The poll's own reference: an enqueue that fails gives its
		// completion's back meanwhile.
		if !streams[c.stream] && c.stream.acquire() {
			streams[c.stream] = true
		}
	}
	completions.Unlock()
	var failed map[*shared[streamState]]bool
	for sc := range streams {
		if streamFailed(&sc.val) {
			if failed == nil {
				failed = make(map[*shared[streamState]]bool)
			}
			failed[sc] = true
		}
		_ = sc.release()
	}
	return failed
}

// streamFailed reports whether a query of st returns an error other than
// "not ready". A stream that is capturing is not queried, which would
// invalidate its capture: its failure is found after the capture.
func streamFailed(st *streamState) bool {
	captureBegin.Lock()
	defer captureBegin.Unlock()
	faultQueries.Add(1)
	var status cu.CUstreamCaptureStatus
	err := cu.StreamIsCapturing(st.raw, &status)
	if err == nil && status != cu.CU_STREAM_CAPTURE_STATUS_NONE {
		return false
	}
	if err == nil {
		err = cu.StreamQuery(st.raw)
	}
	switch err {
	case nil, error(cu.CUDA_ERROR_NOT_READY),
		error(cu.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED), error(cu.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED),
		error(cu.CUDA_ERROR_STREAM_CAPTURE_IMPLICIT), error(cu.CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD):
		return false
	}
	return true
}

// dropCompletions gives up the completions pending on the failed streams,
// whose host functions the driver will not call: Done channels are closed
// (the waiter finds the error by asking the stream) and Then functions are
// dropped without running. A host function that the driver was calling as
// the failure struck may still deliver its token, which is then ignored.
func dropCompletions(failed map[*shared[streamState]]bool) {
	var dropped []completion
	completions.Lock()
	for t, c := range completions.pending {
		if failed[c.stream] {
			delete(completions.pending, t)
			dropped = append(dropped, c)
		}
	}
	completions.Unlock()
	// A channel still waits for the functions of Then that its stream
	// reached before it, which run.
	for _, c := range dropped {
		raw := c.stream.val.raw
		_ = c.stream.release()
		if c.done != nil {
			c.stream = nil
			handOver(raw, c)
		}
	}
}

// Then enqueues fn to run once the work enqueued on s so far has completed
// (cuLaunchHostFunc). Unlike a host function of C, fn does not hold up the
// work enqueued after it: the driver's thread only records the completion,
// and fn runs on a goroutine of this package, one per stream with
// functions to run, after the stream's earlier functions of Then have
// returned. A function that blocks thus holds back the later functions of
// Then of its stream, and the channels of Done behind them, but never the
// device's work or the completions of other streams.
//
// fn may call anything in this package, and wait for any stream: for its
// own, WaitIdle and Synchronize wait for the device's work alone, and so
// does the channel of a Done it calls, which cannot wait for fn. It must
// not wait for a later function of Then of its stream, which runs only
// once fn has returned, nor, by way of another goroutine, for a Done of
// its stream made after it.
//
// A panic in fn ends the program, as a panic in any goroutine does: the
// stack shown is fn's under the goroutine that runs the stream's
// functions (runThens), with no frame of the driver or of cgo, which fn
// never runs on. Work enqueued before the stream's last Close still
// completes, and its functions still run: a pending completion holds the
// stream, whose destroy waits for it.
//
// fn runs at most once, and not at all if the stream's context fails
// before the stream reaches it (a kernel's fault): the driver then calls
// no host function, and the completion is dropped within about a second
// (see Done). A stream capturing into a graph refuses it
// (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED).
func (s *Stream) Then(fn func()) error {
	const op = "Stream.Then"
	if fn == nil {
		if _, ok := s.handle().peek(); !ok {
			return s.handle().closedError(op)
		}
		return invalidArg(op, "nil function")
	}
	return s.enqueueCompletion(op, completion{fn: fn})
}

// Done returns a channel that is closed once the work enqueued on s so far
// has completed, for use in a select: the driver reports the completion
// (cuLaunchHostFunc), and the functions of Then that the stream reached
// before it have returned, so what they did is seen. Called from one of
// them, on its own stream, Done waits for the device alone: the channel
// cannot wait for its caller, nor for the functions queued behind it.
//
// The channel is also closed, within about a second (and once those
// functions have returned), once the stream's context has failed (a kernel's fault, which is sticky: every later
// synchronizing call reports it), as the driver then reports no
// completion. A closed channel therefore says that the stream will make no
// more progress, not that its work succeeded: Synchronize and WaitIdle
// then return nil if it did, and the driver's error (matching its result,
// such as cu.CUDA_ERROR_ILLEGAL_ADDRESS) if the context failed, as Query
// does. The failure is found by asking the driver about the stream now
// and then while a completion is pending (first after 10 ms, then at
// intervals doubling to a second), never sooner: work that completes is
// reported, not polled for.
//
// A completion holds the stream, so the stream's last Close destroys it
// once its pending completions are delivered or dropped.
func (s *Stream) Done() (<-chan struct{}, error) {
	const op = "Stream.Done"
	st, ok := s.handle().peek()
	if !ok {
		return nil, s.handle().closedError(op)
	}
	return s.done(op, inThenOf(st.raw))
}

// done is Done, whose channel does not wait for functions of Then if
// direct is set.
func (s *Stream) done(op string, direct bool) (chan struct{}, error) {
	ch := make(chan struct{})
	if err := s.enqueueCompletion(op, completion{done: ch, direct: direct}); err != nil {
		return nil, err
	}
	return ch, nil
}

// waitDone is WaitIdle through Done: it returns nil once the work
// enqueued so far has completed, the driver's error if the stream failed,
// or ctx.Err() first.
func (s *Stream) waitDone(ctx context.Context, done <-chan struct{}) error {
	const op = "Stream.WaitIdle"
	select {
	case <-done:
		// The work is done, or the context failed. The host function that
		// said so may still be retiring: Synchronize returns at once, with
		// the failure if there was one, and leaves the stream idle, as
		// Query will then report.
		h := s.handle()
		st, ok := h.enter()
		if !ok {
			// Closed meanwhile: whether the work succeeded is no
			// longer this handle's to ask.
			return h.closedError(op)
		}
		err := cu.StreamSynchronize(st.raw)
		h.exit()
		return check(op, "cuStreamSynchronize", err)
	case <-ctx.Done():
		// The completion stays pending until the stream reaches it, or
		// fails; the channel is then closed with nobody waiting.
		h := s.handle()
		st, ok := h.enter()
		if !ok {
			return ctx.Err()
		}
		err := cu.StreamQuery(st.raw)
		h.exit()
		switch err {
		case nil:
			return nil
		case error(cu.CUDA_ERROR_NOT_READY):
			return ctx.Err()
		}
		return newError(op, "cuStreamQuery", err)
	}
}
