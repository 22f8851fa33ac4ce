package cuda

/*
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

// Completions of host functions enqueued by Stream.Then and Stream.Done.
// The host function the driver calls is this C function: it records the
// token and writes a byte to a pipe, and returns at once. No Go code runs
// on the driver's thread, so a Go callback can neither block the stream
// nor panic into the driver; a goroutine of this package reads the pipe
// and delivers the tokens.
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
	gocuda_done_q[gocuda_done_n++] = (uint64_t)(uintptr_t)arg;
	pthread_mutex_unlock(&gocuda_done_mu);
	// A full pipe already holds a wake-up: the reader drains the whole
	// queue on each one.
	char b = 1;
	ssize_t r;
	do
		r = write(gocuda_done_wfd, &b, 1);
	while (r < 0 && errno == EINTR);
}

static void gocuda_done_init(int wfd) { gocuda_done_wfd = wfd; }

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
	return ((int (*)(uintptr_t, void (*)(void *), void *))fn)(stream, gocuda_host_done, (void *)(uintptr_t)token);
}
*/
import "C"

import (
	"context"
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// completions maps the tokens of host functions not yet completed to what
// their completion delivers; the dispatcher goroutine runs while there are
// any, and exits when there are none, so an idle program keeps none.
var completions struct {
	sync.Mutex
	next    uint64
	pending map[uint64]completion
	running bool     // a dispatcher goroutine is reading
	pipe    *os.File // read end of the wake-up pipe, made on first use
	err     error
}

// A completion is a channel to close or a function to run.
type completion struct {
	done chan struct{}
	fn   func()
}

var hostFuncProc = sync.OnceValues(func() (uintptr, error) { return cu.Proc("cuLaunchHostFunc") })

// enqueueCompletion enqueues on s a host function that delivers c once the
// work enqueued before it has completed.
func (s *Stream) enqueueCompletion(op string, c completion) error {
	h := s.handle()
	st, ok := h.enter()
	if !ok {
		return closedError(op)
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
	completions.Lock()
	if err := openCompletionPipe(); err != nil {
		completions.Unlock()
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
		return newError(op, "cuLaunchHostFunc", cu.CUresult(r))
	}
	// The dispatcher starts only for a token the driver will complete: one
	// started for a launch that then failed would wait on the pipe for
	// nothing. A running one does not exit while token is pending.
	if !completions.running {
		completions.running = true
		go dispatchCompletions(completions.pipe, nil)
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
	C.gocuda_done_init(C.int(p[1]))
	return nil
}

// dispatchCompletions delivers completed tokens, first carry, until none
// is pending. Functions run here, one after another, in the order their
// streams reached them; a panic in one ends the program from this
// goroutine, as a panic in any goroutine does, and never reaches the
// driver.
func dispatchCompletions(pipe *os.File, carry []uint64) {
	var buf [64]byte
	var tokens [256]uint64
	deliverAll(carry)
	for {
		completions.Lock()
		if len(completions.pending) == 0 {
			completions.running = false
			completions.Unlock()
			return
		}
		completions.Unlock()
		if _, err := pipe.Read(buf[:]); err != nil && err != syscall.EAGAIN {
			panic("cuda: completion pipe: " + err.Error())
		}
		for {
			n := int(C.gocuda_done_take((*C.uint64_t)(unsafe.Pointer(&tokens[0])), C.size_t(len(tokens))))
			if n == 0 {
				break
			}
			deliverAll(tokens[:n])
		}
	}
}

// deliverAll delivers the completions of tokens, in order.
func deliverAll(tokens []uint64) {
	for i, t := range tokens {
		completions.Lock()
		c, ok := completions.pending[t]
		delete(completions.pending, t)
		completions.Unlock()
		switch {
		case !ok:
		case c.done != nil:
			close(c.done)
		case c.fn != nil:
			runCompletion(c.fn, tokens[i+1:])
		}
	}
}

// runCompletion runs fn. If fn ends the dispatcher's goroutine instead of
// returning (runtime.Goexit, as t.FailNow does), a new dispatcher takes
// over the tokens still to deliver, so later completions are not lost.
func runCompletion(fn func(), rest []uint64) {
	returned := false
	defer func() {
		if !returned {
			go dispatchCompletions(completions.pipe, append([]uint64(nil), rest...))
		}
	}()
	fn()
	returned = true
}

// Then enqueues fn to run once the work enqueued on s so far has completed
// (cuLaunchHostFunc). Unlike a host function of C, fn does not hold up the
// work enqueued after it: the driver's thread only records the completion,
// and fn runs on a goroutine of this package, after the functions of
// earlier completions. Keep it short; start a goroutine for long work. A
// panic in fn ends the program, from that goroutine. Work enqueued before
// the stream's last Close still completes, and its functions still run.
// A stream capturing into a graph refuses it (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED).
func (s *Stream) Then(fn func()) error {
	const op = "Stream.Then"
	if fn == nil {
		if _, ok := s.handle().peek(); !ok {
			return closedError(op)
		}
		return invalidArg(op, "nil function")
	}
	return s.enqueueCompletion(op, completion{fn: fn})
}

// Done returns a channel that is closed once the work enqueued on s so far
// has completed, for use in a select. It polls nothing: the driver reports
// the completion (cuLaunchHostFunc). A stream whose work fails (a kernel
// fault) still reaches it; Synchronize or Query reports the error.
func (s *Stream) Done() (<-chan struct{}, error) {
	ch := make(chan struct{})
	if err := s.enqueueCompletion("Stream.Done", completion{done: ch}); err != nil {
		return nil, err
	}
	return ch, nil
}

// waitDone is WaitIdle through Done: it returns nil once the work
// enqueued so far has completed, or ctx.Err() first.
func (s *Stream) waitDone(ctx context.Context, done <-chan struct{}) error {
	select {
	case <-done:
		// The work is done; the host function that said so may still be
		// retiring. Synchronize returns at once and leaves the stream
		// idle, as Query will then report.
		h := s.handle()
		st, ok := h.enter()
		if !ok {
			return nil // closed meanwhile: its work is done all the same
		}
		err := cu.StreamSynchronize(st.raw)
		h.exit()
		return check("Stream.WaitIdle", "cuStreamSynchronize", err)
	case <-ctx.Done():
		// The completion stays pending until the stream reaches it; the
		// channel is then closed with nobody waiting.
		if idle, err := s.Query(); err == nil && idle {
			return nil
		}
		return ctx.Err()
	}
}
