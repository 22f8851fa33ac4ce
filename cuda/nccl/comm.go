//go:build linux && (amd64 || arm64)

package nccl

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/nccl"
)

// Error is the error of a call into NCCL: the operation, the C function
// that failed and its cause, whose chain holds the nccl.NcclResult_t that
// errors.Is matches, with NCCL's last error text in the message.
type Error = cuda.LibraryError

// UniqueIDSize is the size of a UniqueID in bytes (NCCL_UNIQUE_ID_BYTES).
const UniqueIDSize = nccl.NCCL_UNIQUE_ID_BYTES

// UniqueID names a communicator to its ranks: one process makes it
// (NewUniqueID) and hands its bytes to the others. It is plain bytes, to
// be sent as they are (MarshalBinary, UnmarshalBinary, or the array
// itself); it holds the address of the first rank's bootstrap socket.
type UniqueID [UniqueIDSize]byte

// MarshalBinary returns the id's bytes.
func (id UniqueID) MarshalBinary() ([]byte, error) { return id[:], nil }

// UnmarshalBinary sets the id from exactly UniqueIDSize bytes.
func (id *UniqueID) UnmarshalBinary(b []byte) error {
	if len(b) != UniqueIDSize {
		return fmt.Errorf("nccl: a unique id is %d bytes, not %d", UniqueIDSize, len(b))
	}
	copy(id[:], b)
	return nil
}

// String is the id in hexadecimal, for logs and command lines.
func (id UniqueID) String() string { return hex.EncodeToString(id[:]) }

// NewUniqueID makes the id of a new communicator (ncclGetUniqueId). It
// needs no GPU; it opens NCCL's bootstrap socket on this host.
func NewUniqueID() (UniqueID, error) {
	var id nccl.NcclUniqueId
	if err := nccl.GetUniqueId(&id); err != nil {
		return UniqueID{}, ncclError("NewUniqueID", "ncclGetUniqueId", err, 0)
	}
	return UniqueID(id.Internal), nil
}

// Version returns the version of the NCCL library loaded, as
// NCCL_VERSION_CODE spells it: 22803 for 2.28.3 (ncclGetVersion).
func Version() (int, error) {
	var v int32
	if err := nccl.GetVersion(&v); err != nil {
		return 0, ncclError("Version", "ncclGetVersion", err, 0)
	}
	return int(v), nil
}

// Comm is one rank of a communicator, bound to a stream: see the package
// comment. All methods are safe for concurrent use.
type Comm struct {
	o  *cuda.LibraryObject[nccl.NcclComm_t]
	sh *commShared
}

// commShared is what a communicator's handles share besides the object.
type commShared struct {
	rank, nranks int
	device       int
	// cc is the device's compute capability, 10·major+minor (90 for 9.0),
	// read once for the checks of FP8 reductions; 0 when unknown.
	cc  int
	ctx cu.CUcontext
	// nonBlocking marks a communicator made with blocking = 0 (InitRank):
	// its calls may answer ncclInProgress, and are then waited for.
	nonBlocking bool
	// raw is the communicator, for Abort, which must not wait for the
	// object's calls.
	raw nccl.NcclComm_t
	// gone is set once the communicator is aborted or destroyed: NCCL
	// has freed it, is freeing it, or will once the groups holding it
	// have ended (group.go). It changes under mu.
	gone atomic.Bool
	// wasAborted: Abort ended it, not the last Close.
	wasAborted atomic.Bool
	// mu orders gone against the groups' hold.
	mu sync.Mutex
	// groups counts the open groups holding the communicator, and
	// freeLater is its free (ncclCommAbort or ncclCommDestroy), put off
	// until they have ended.
	groups    int
	freeLater func() error
	// aborted is closed by the abort, to end the waits for the
	// communicator's calls in progress.
	aborted chan struct{}
}

// The calls into NCCL that a non-blocking communicator's waits and abort
// make, as variables so that the tests can stand in for a peer that never
// answers.
var (
	ncclCommGetAsyncError = nccl.CommGetAsyncError
	ncclCommAbort         = nccl.CommAbort
	ncclCommFinalize      = nccl.CommFinalize
	ncclCommDestroy       = nccl.CommDestroy
	ncclGroupStart        = nccl.GroupStart
	ncclGroupEnd          = nccl.GroupEnd
)

// abortGate orders NCCL's calls on non-blocking communicators against
// ncclCommAbort, which frees the communicator: each such call returns at
// once (ncclInProgress where it has more to do), and is made holding the
// gate shared, after checking that its communicator is not gone; the
// abort holds it alone. A wait for a call in progress polls
// (ncclCommGetAsyncError) under the gate and sleeps outside it, and ends
// when the communicator is aborted, so that Abort can end a wait for a
// peer that never answers. The gate is never taken twice by one
// goroutine: a writer waiting would block the second read.
var abortGate sync.RWMutex

// errAborted is what a gated call or a wait returns once the communicator
// is aborted; call turns it into an error matching cuda.ErrClosed.
var errAborted = errors.New("nccl: the communicator was aborted")

// gated runs f, an NCCL call on sh's communicator that returns at once,
// under the abort gate, unless the communicator is gone.
func (sh *commShared) gated(f func() error) error {
	abortGate.RLock()
	defer abortGate.RUnlock()
	if sh.gone.Load() {
		return errAborted
	}
	return f()
}

// abort ends the communicator (ncclCommAbort) once, whatever its calls
// are waiting for, and wakes those waits. A group holding it puts off
// ncclCommAbort until its end (release). NCCL makes the communicator's
// device current for ncclCommAbort and ncclCommDestroy itself, so they may
// run on the thread of any group.
func (sh *commShared) abort(op string) error {
	if !sh.retire(true) {
		return nil
	}
	unregister(sh)
	if sh.aborted != nil {
		close(sh.aborted)
	}
	return sh.release(func() error {
		abortGate.Lock()
		err := ncclCommAbort(sh.raw)
		abortGate.Unlock()
		return ncclError(op, "ncclCommAbort", err, 0)
	})
}

// error is ncclError for a call on sh's communicator: NCCL's last error
// text is read under the abort gate, and not from a communicator that is
// gone.
func (sh *commShared) error(op, fn string, err error, raw nccl.NcclComm_t) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, errAborted) {
		return abortedErr(op)
	}
	if !sh.nonBlocking {
		return ncclError(op, fn, err, raw)
	}
	abortGate.RLock()
	defer abortGate.RUnlock()
	if sh.gone.Load() {
		raw = 0
	}
	return ncclError(op, fn, err, raw)
}

// ncclError makes the error of a failed NCCL call, with NCCL's last error
// text (of comm, or of the thread when comm is 0) in its message.
func ncclError(op, fn string, err error, comm nccl.NcclComm_t) error {
	if err == nil {
		return nil
	}
	var r nccl.NcclResult_t
	if errors.As(err, &r) {
		if text := lastError(comm); text != "" {
			err = fmt.Errorf("%w: %s", err, text)
		}
	}
	return &Error{Pkg: "nccl", Op: op, Func: fn, Err: err}
}

// lastError is ncclGetLastError's text, "" when there is none.
func lastError(comm nccl.NcclComm_t) string {
	p, err := nccl.GetLastError(comm)
	if err != nil || p == nil {
		return ""
	}
	return strings.TrimSpace(cString(p, 4096))
}

// cString reads a C string of at most max bytes that C owns.
func cString(p *byte, max int) string {
	var b []byte
	for i := 0; i < max; i++ {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(p), i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// closedErr is the error of a call on a closed, nil or aborted communicator.
func closedErr(op string) error {
	return fmt.Errorf("nccl: %s: %w", op, cuda.ErrClosed)
}

// abortedErr is closedErr for a call on a communicator that Abort ended.
func abortedErr(op string) error { return closedErr(op + " (aborted)") }

func (c *Comm) obj() (*cuda.LibraryObject[nccl.NcclComm_t], *commShared, bool) {
	if c == nil || c.o == nil || c.sh == nil {
		return nil, nil, false
	}
	return c.o, c.sh, true
}

// call runs fn on the raw communicator with the objects of hold held, and
// waits out ncclInProgress on a non-blocking communicator, until the
// communicator is aborted.
func (c *Comm) call(op, fn string, do func(raw nccl.NcclComm_t, stream cu.CUstream) error, hold ...cuda.Holder) error {
	o, sh, ok := c.obj()
	if !ok {
		return closedErr(op)
	}
	return o.CallOnStream(op, func(raw nccl.NcclComm_t, stream cu.CUstream) error {
		if err := sh.join(); err != nil {
			return abortedErr(op)
		}
		if !sh.nonBlocking {
			// Abort waits for this call (Comm.Abort).
			return ncclError(op, fn, do(raw, stream), raw)
		}
		err := sh.gated(func() error { return do(raw, stream) })
		if errors.Is(err, nccl.NcclInProgress) {
			err = settle(context.Background(), sh, raw)
		}
		return sh.error(op, fn, err, raw)
	}, hold...)
}

// settle polls a non-blocking communicator until its last operation is no
// longer in progress (ncclCommGetAsyncError), ctx is done, or the
// communicator is aborted (errAborted). sh is nil for a communicator
// still being made, which nobody else can abort.
func settle(ctx context.Context, sh *commShared, raw nccl.NcclComm_t) error {
	var aborted <-chan struct{}
	if sh != nil {
		aborted = sh.aborted
	}
	poll := func() (nccl.NcclResult_t, error) {
		abortGate.RLock()
		defer abortGate.RUnlock()
		if sh != nil && sh.gone.Load() {
			return 0, errAborted
		}
		var st nccl.NcclResult_t
		err := ncclCommGetAsyncError(raw, &st)
		return st, err
	}
	wait := 20 * time.Microsecond
	for {
		st, err := poll()
		if err != nil {
			return err
		}
		if st != nccl.NcclInProgress {
			if st == nccl.NcclSuccess {
				return nil
			}
			return st
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-aborted:
			t.Stop()
			return errAborted
		case <-t.C:
		}
		wait = min(2*wait, 5*time.Millisecond)
	}
}

// registry holds the live non-blocking communicators, which Group polls
// when ncclGroupEnd answers ncclInProgress. A communicator leaves it
// before NCCL frees it, and the poll holds it meanwhile.
var registry struct {
	mu    sync.RWMutex
	comms map[*commShared]nccl.NcclComm_t
}

func register(sh *commShared, raw nccl.NcclComm_t) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.comms == nil {
		registry.comms = map[*commShared]nccl.NcclComm_t{}
	}
	registry.comms[sh] = raw
}

func unregister(sh *commShared) {
	registry.mu.Lock()
	delete(registry.comms, sh)
	registry.mu.Unlock()
}

// settleAll waits out ncclInProgress on every registered communicator,
// from a copy of the registry: an Abort, which unregisters, must not wait
// for the wait it ends. A communicator aborted meanwhile no longer holds
// the group up.
func settleAll() error {
	registry.mu.RLock()
	comms := maps.Clone(registry.comms)
	registry.mu.RUnlock()
	var first error
	for sh, raw := range comms {
		err := settle(context.Background(), sh, raw)
		if err != nil && !errors.Is(err, errAborted) && first == nil {
			first = err
		}
	}
	return first
}

// wrap makes the Comm of raw, made already, bound to a clone of s. On
// failure raw is destroyed.
func wrap(op string, s *cuda.Stream, raw nccl.NcclComm_t, rank, nranks int, nonBlockingComm bool) (*Comm, error) {
	sh := &commShared{rank: rank, nranks: nranks, nonBlocking: nonBlockingComm, raw: raw, aborted: make(chan struct{})}
	if ctx := s.Context(); ctx != nil {
		sh.ctx, sh.device = ctx.Raw(), ctx.Device().Ordinal()
		if major, minor, err := ctx.Device().ComputeCapability(); err == nil {
			sh.cc = 10*major + minor
		}
	}
	o, err := cuda.NewLibraryObject(s, func() (nccl.NcclComm_t, error) { return raw, nil },
		func(raw nccl.NcclComm_t) error { return destroy(sh, raw) })
	if err != nil {
		_ = nccl.CommDestroy(raw)
		return nil, err
	}
	if nonBlockingComm {
		register(sh, raw)
	}
	return &Comm{o: o, sh: sh}, nil
}

// destroy is the end of the last handle (ncclCommDestroy), nothing for an
// aborted communicator, whose memory NCCL freed already (or frees at the
// end of the groups holding it). A group holding it puts off
// ncclCommDestroy until its end (release).
func destroy(sh *commShared, raw nccl.NcclComm_t) error {
	unregister(sh)
	if !sh.retire(false) {
		return nil
	}
	return sh.release(func() error {
		err := ncclCommDestroy(raw)
		if sh.nonBlocking && errors.Is(err, nccl.NcclInProgress) {
			err = nil // destroy goes on in NCCL's threads; the handle is gone
		}
		return ncclError("Comm.Close", "ncclCommDestroy", err, 0)
	})
}

// checkStream refuses a stream whose context is not the primary context
// of its device: NCCL works there, through the CUDA runtime.
func checkStream(op string, s *cuda.Stream) error {
	ctx := s.Context()
	if ctx == nil {
		return closedErr(op + " (stream)")
	}
	if !ctx.IsPrimary() {
		return fmt.Errorf("nccl: %s: the stream's context is not the primary context of %v (use cuda.PrimaryContext): %w", op, ctx.Device(), nccl.NcclInvalidArgument)
	}
	return nil
}

// InitAll makes one communicator of len(streams) ranks in this process,
// rank i on the device of streams[i] and bound to a clone of it
// (ncclCommInitAll). Each stream must be of the primary context of a device
// of its own. The communicators are returned in rank order; close each.
func InitAll(streams []*cuda.Stream) ([]*Comm, error) {
	const op = "InitAll"
	if len(streams) == 0 {
		return nil, fmt.Errorf("nccl: %s: no streams: %w", op, nccl.NcclInvalidArgument)
	}
	devs := make([]int32, len(streams))
	seen := map[int]bool{}
	for i, s := range streams {
		if err := checkStream(op, s); err != nil {
			return nil, err
		}
		d := s.Context().Device().Ordinal()
		if seen[d] {
			return nil, fmt.Errorf("nccl: %s: two streams of device %d: one rank a device: %w", op, d, nccl.NcclInvalidArgument)
		}
		seen[d], devs[i] = true, int32(d)
	}
	raws := make([]nccl.NcclComm_t, len(streams))
	// NCCL sets the current device of the thread to each in turn and back
	// to the one current when it began: the first stream's context, made
	// current here, is restored.
	err := streams[0].Context().Do(func() error {
		return nccl.CommInitAll(&raws[0], int32(len(raws)), &devs[0])
	})
	if err != nil {
		return nil, ncclError(op, "ncclCommInitAll", err, 0)
	}
	comms := make([]*Comm, len(raws))
	for i, raw := range raws {
		c, err := wrap(op, streams[i], raw, i, len(raws), false)
		if err != nil {
			for _, done := range comms[:i] {
				_ = done.Close()
			}
			for _, r := range raws[i+1:] {
				_ = nccl.CommDestroy(r)
			}
			return nil, err
		}
		comms[i] = c
	}
	return comms, nil
}

// nonBlockingConfig is NCCL_CONFIG_INITIALIZER with blocking = 0: its
// size, magic and the header's version, which tells the library how much
// of the struct there is, and NCCL_CONFIG_UNDEF_INT in every int field
// (NCCL_CONFIG_UNDEF_PTR, nil, in the pointers). The fields differ between
// NCCL versions (2.28 has seven more than 2.22), and NCCL refuses a zero
// where it expects "undefined", so every int32 field is set by reflection
// rather than by name.
var nonBlockingConfig = sync.OnceValue(func() nccl.NcclConfig_t {
	var c nccl.NcclConfig_t
	v := reflect.ValueOf(&c).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Int32 {
			f.SetInt(nccl.NCCL_CONFIG_UNDEF_INT)
		}
	}
	c.Size = uint64(unsafe.Sizeof(c))
	c.Magic = 0xcafebeef
	c.Version = uint32(nccl.HeaderVersion())
	c.Blocking = 0
	return c
})

// InitRank makes rank rank of the communicator id names, of nranks ranks,
// on the device of s and bound to a clone of it (ncclCommInitRankConfig,
// non-blocking). It returns once every rank has joined; if ctx is done
// first, the communicator is aborted (ncclCommAbort) and InitRank returns
// an error matching ctx.Err().
func InitRank(ctx context.Context, s *cuda.Stream, id UniqueID, nranks, rank int) (*Comm, error) {
	const op = "InitRank"
	if nranks < 1 || rank < 0 || rank >= nranks || nranks > 1<<30 {
		return nil, fmt.Errorf("nccl: %s: rank %d of %d ranks: %w", op, rank, nranks, nccl.NcclInvalidArgument)
	}
	if err := checkStream(op, s); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("nccl: %s: %w", op, err)
	}
	var raw nccl.NcclComm_t
	cfg := nonBlockingConfig()
	uid := nccl.NcclUniqueId{Internal: id}
	err := s.Context().Do(func() error {
		err := nccl.CommInitRankConfig(&raw, int32(nranks), uid, int32(rank), &cfg)
		if errors.Is(err, nccl.NcclInProgress) {
			return nil
		}
		return err
	})
	if err != nil {
		if raw != 0 {
			_ = nccl.CommAbort(raw)
		}
		return nil, ncclError(op, "ncclCommInitRankConfig", err, 0)
	}
	if err := settle(ctx, nil, raw); err != nil {
		text := lastError(raw)
		// The communicator is half made: abort frees it, and its
		// bootstrap threads stop waiting for the peers.
		aerr := nccl.CommAbort(raw)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("nccl: %s: rank %d of %d: the peers did not all join: %w (ncclCommAbort: %v)", op, rank, nranks, ctx.Err(), aerr)
		}
		e := &Error{Pkg: "nccl", Op: op, Func: "ncclCommInitRankConfig", Err: err}
		if text != "" {
			e.Err = fmt.Errorf("%w: %s", err, text)
		}
		return nil, e
	}
	return wrap(op, s, raw, rank, nranks, true)
}

// Clone returns another handle to the communicator, to be closed on its own.
func (c *Comm) Clone() (*Comm, error) {
	o, sh, ok := c.obj()
	if !ok {
		return nil, closedErr("Comm.Clone")
	}
	o2, err := o.Clone()
	if err != nil {
		return nil, err
	}
	return &Comm{o: o2, sh: sh}, nil
}

// Close releases this handle; the last Close destroys the communicator
// (ncclCommDestroy, which waits for its queued work). While a Group that
// used the communicator is open, NCCL's destroy waits for that group's
// end, and its error is the group's (see Group).
func (c *Comm) Close() error {
	o, _, ok := c.obj()
	if !ok {
		return closedErr("Comm.Close")
	}
	return o.Close()
}

// Abort ends the communicator at once for every handle (ncclCommAbort),
// whatever it is doing or waiting for, and closes this handle. The other
// handles' calls then fail with an error matching cuda.ErrClosed; close
// them too. On a communicator of InitRank, Abort ends the calls, Group and
// Shutdown that wait for a peer (from any goroutine: to bound such a wait,
// call Abort when a context is done, with context.AfterFunc); on one of
// InitAll, whose calls do not wait for other processes, it waits for the
// calls in flight first. While a Group that used the communicator is open,
// on any goroutine (this one's included), Abort still ends the calls and
// waits at once, and returns without waiting for the group; NCCL's abort
// waits for the group's end, and its error is the group's (see Group).
func (c *Comm) Abort() error {
	const op = "Comm.Abort"
	o, sh, ok := c.obj()
	if !ok {
		return closedErr(op)
	}
	var err error
	if sh.nonBlocking {
		err = sh.abort(op)
	} else {
		err = o.Exclusive(op, func(nccl.NcclComm_t) error { return sh.abort(op) })
	}
	if cerr := o.Close(); err == nil {
		err = cerr
	}
	return err
}

// Shutdown flushes the communicator's queued work and ends its part in the
// communicator (ncclCommFinalize), then closes this handle. If ctx is done
// first, for a peer that does not answer, the communicator is aborted and
// Shutdown returns an error matching ctx.Err(). On a communicator of
// InitAll, ncclCommFinalize blocks: ctx is not honoured there.
func (c *Comm) Shutdown(ctx context.Context) error {
	const op = "Comm.Shutdown"
	o, sh, ok := c.obj()
	if !ok {
		return closedErr(op)
	}
	var aborted bool
	err := o.Exclusive(op, func(raw nccl.NcclComm_t) error {
		// Inside Group, NCCL queues ncclCommFinalize in the group too.
		if err := sh.join(); err != nil {
			return abortedErr(op)
		}
		if !sh.nonBlocking {
			return ncclError(op, "ncclCommFinalize", ncclCommFinalize(raw), raw)
		}
		err := sh.gated(func() error { return ncclCommFinalize(raw) })
		if errors.Is(err, nccl.NcclInProgress) {
			err = settle(ctx, sh, raw)
			if ctx.Err() != nil && !errors.Is(err, errAborted) {
				_ = sh.abort(op)
				aborted = true
				return fmt.Errorf("nccl: %s: %w", op, ctx.Err())
			}
		}
		return sh.error(op, "ncclCommFinalize", err, raw)
	})
	if cerr := o.Close(); err == nil && !aborted {
		err = cerr
	}
	return err
}

// Rank is this communicator's rank; 0 once the handle is closed.
func (c *Comm) Rank() int {
	if _, sh, ok := c.obj(); ok {
		return sh.rank
	}
	return 0
}

// Size is the number of ranks of the communicator.
func (c *Comm) Size() int {
	if _, sh, ok := c.obj(); ok {
		return sh.nranks
	}
	return 0
}

// Device is the ordinal of the communicator's device.
func (c *Comm) Device() int {
	if _, sh, ok := c.obj(); ok {
		return sh.device
	}
	return 0
}

// Raw returns the raw communicator, for calls of generated/nccl (or C) of
// the caller's own; 0 once this handle is closed or the communicator
// aborted. It stays owned by the handles: do not destroy it, and do not
// use it after the last Close.
func (c *Comm) Raw() nccl.NcclComm_t {
	o, sh, ok := c.obj()
	if !ok {
		return 0
	}
	var raw nccl.NcclComm_t
	_ = o.Call("Comm.Raw", func(r nccl.NcclComm_t) error {
		if sh.join() == nil {
			raw = r
		}
		return nil
	})
	return raw
}

// Stream returns the communicator's stream, owned by it (see
// cuda.LibraryObject.Stream); nil once this handle is closed.
func (c *Comm) Stream() *cuda.Stream {
	if o, _, ok := c.obj(); ok {
		return o.Stream()
	}
	return nil
}

// SetStream moves the communicator to s, a stream of its context: later
// collectives go there. Work already queued stays on the old stream.
func (c *Comm) SetStream(s *cuda.Stream) error {
	o, _, ok := c.obj()
	if !ok {
		return closedErr("Comm.SetStream")
	}
	return o.SetStream("Comm.SetStream", s, func(nccl.NcclComm_t, cu.CUstream) error { return nil })
}

// AsyncError reports an error NCCL met in the background on the
// communicator (ncclCommGetAsyncError): a peer that failed, say. It is
// nil while all is well.
func (c *Comm) AsyncError() error {
	return c.call("Comm.AsyncError", "ncclCommGetAsyncError", func(raw nccl.NcclComm_t, _ cu.CUstream) error {
		var st nccl.NcclResult_t
		if err := ncclCommGetAsyncError(raw, &st); err != nil {
			return err
		}
		if st == nccl.NcclSuccess || st == nccl.NcclInProgress {
			return nil
		}
		return st
	})
}
