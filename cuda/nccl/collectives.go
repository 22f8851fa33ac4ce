//go:build linux && (amd64 || arm64)

package nccl

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/nccl"
)

// Element is an element type NCCL reduces and moves. The FP8 types,
// cuda.Float8E4M3 and cuda.Float8E5M2, need NCCL 2.24 or later, and NCCL
// reduces them on devices of compute capability 9.0 or later only: see
// the package comment.
type Element interface {
	int8 | uint8 | int32 | uint32 | int64 | uint64 |
		float32 | float64 | cuda.Float16 | cuda.BFloat16 |
		cuda.Float8E4M3 | cuda.Float8E5M2
}

// ncclBfloat16 is bfloat16's ncclDataType_t. nccl.h declares it only where
// cuda_bf16.h has declared its C++ types, never to C: the value is NCCL's
// ABI, the same in every version that has it (2.10 and later).
const ncclBfloat16 nccl.NcclDataType_t = 9

// ncclFloat8e4m3 and ncclFloat8e5m2 are the FP8 types' ncclDataType_t.
// nccl.h declares them from NCCL 2.24 on: generated/nccl has them from
// 2.28.3's header, but not in the build of 2.22.3's (the tag nccl22203),
// whose header predates them; the values are NCCL's ABI, the same in every
// version that has them, and a library is checked for them at run time
// (checkElement).
const (
	ncclFloat8e4m3 nccl.NcclDataType_t = 10
	ncclFloat8e5m2 nccl.NcclDataType_t = 11
)

// fp8Version is NCCL_VERSION(2,24,0): NCCL 2.24 (first released as
// 2.24.3) is the first to take the FP8 types; an older one refuses type
// numbers it does not know (ncclInvalidArgument, "invalid type").
const fp8Version = 22400

// loadedVersion is Version, asked of NCCL once (a cgo call) for the checks
// of FP8 data on every collective; a variable, so that the tests can stand
// in for an older library.
var loadedVersion = sync.OnceValues(Version)

// versionString spells a NCCL_VERSION_CODE as a release: 22803 as 2.28.3,
// 2708 (the codes before 2.9 have one digit of minor) as 2.7.8.
func versionString(code int) string {
	if code < 10000 {
		return fmt.Sprintf("%d.%d.%d", code/1000, code/100%10, code%100)
	}
	return fmt.Sprintf("%d.%d.%d", code/10000, code/100%100, code%100)
}

// checkElement refuses FP8 data before NCCL where NCCL would refuse it:
// with a library older than 2.24, for every collective; and for a
// reduction (reduces) on a device of compute capability below 9.0. NCCL
// builds its FP8 reductions for sm90 and later only and refuses them where
// the lowest compute capability of the communicator's ranks is below 9.0
// (ncclInvalidArgument, "FP8 reduction support begins with sm90 capable
// devices"), so that this rank's own device decides it for sure; another
// rank's older device is NCCL's to refuse. Before NCCL, the refusal
// leaves a non-blocking communicator (InitRank) usable: NCCL would make
// it the communicator's asynchronous error, and an enclosing group's.
func checkElement[T Element](name string, sh *commShared, reduces bool) error {
	dt := dataType[T]()
	if dt != ncclFloat8e4m3 && dt != ncclFloat8e5m2 {
		return nil
	}
	typ := "ncclFloat8e4m3"
	if dt == ncclFloat8e5m2 {
		typ = "ncclFloat8e5m2"
	}
	// Without the library the call fails in NCCL's place anyway.
	if v, err := loadedVersion(); err == nil && v < fp8Version {
		return invalid(name, "%T data (%s) needs NCCL 2.24 or later, and the NCCL loaded is %s", *new(T), typ, versionString(v))
	}
	if reduces && sh.cc != 0 && sh.cc < 90 {
		return invalid(name, "NCCL reduces %T data (%s) on devices of compute capability 9.0 or later only, and device %d is %d.%d", *new(T), typ, sh.device, sh.cc/10, sh.cc%10)
	}
	return nil
}

// dataType is T's ncclDataType_t.
func dataType[T Element]() nccl.NcclDataType_t {
	var v T
	switch any(v).(type) {
	case int8:
		return nccl.NcclInt8
	case uint8:
		return nccl.NcclUint8
	case int32:
		return nccl.NcclInt32
	case uint32:
		return nccl.NcclUint32
	case int64:
		return nccl.NcclInt64
	case uint64:
		return nccl.NcclUint64
	case float32:
		return nccl.NcclFloat32
	case float64:
		return nccl.NcclFloat64
	case cuda.Float16:
		return nccl.NcclFloat16
	case cuda.BFloat16:
		return ncclBfloat16
	case cuda.Float8E4M3:
		return ncclFloat8e4m3
	case cuda.Float8E5M2:
		return ncclFloat8e5m2
	}
	panic("nccl: unreachable element type")
}

// Op is a reduction.
type Op int

// The reductions NCCL has built in.
const (
	Sum  Op = Op(nccl.NcclSum)
	Prod Op = Op(nccl.NcclProd)
	Max  Op = Op(nccl.NcclMax)
	Min  Op = Op(nccl.NcclMin)
	// Avg is the sum divided by the number of ranks.
	Avg Op = Op(nccl.NcclAvg)
)

func (op Op) String() string {
	switch op {
	case Sum:
		return "Sum"
	case Prod:
		return "Prod"
	case Max:
		return "Max"
	case Min:
		return "Min"
	case Avg:
		return "Avg"
	}
	return fmt.Sprintf("Op(%d)", int(op))
}

func (op Op) valid() bool { return op >= Sum && op <= Avg }

// invalid is the error of arguments refused before NCCL.
func invalid(op, format string, args ...any) error {
	return &Error{Pkg: "nccl", Op: op, Func: "(checked before NCCL)", Err: fmt.Errorf(format+": %w", append(args, nccl.NcclInvalidArgument)...)}
}

// view is what a collective needs of a slice, read before the call: a nil
// or closed slice reads as closed.
type view struct {
	ptr cu.CUdeviceptr
	n   int
	ctx cu.CUcontext
}

func viewOf[T Element](s *cuda.Slice[T]) (view, bool) {
	if s == nil {
		return view{}, false
	}
	ctx := s.Context()
	p := s.Ptr()
	if ctx == nil || p == 0 {
		return view{}, false
	}
	return view{ptr: p, n: s.Len(), ctx: ctx.Raw()}, true
}

// operands reads the slices of a collective and checks that each is open
// and in the communicator's context. A nil entry of optional may be nil.
func operands[T Element](op string, sh *commShared, names []string, slices []*cuda.Slice[T], optional []bool) ([]view, error) {
	vs := make([]view, len(slices))
	for i, s := range slices {
		if s == nil && optional[i] {
			continue
		}
		v, ok := viewOf(s)
		if !ok {
			return nil, closedErr(op + " (" + names[i] + ")")
		}
		if v.ctx != sh.ctx {
			return nil, invalid(op, "the %s is memory of another context than the communicator's (device %d)", names[i], sh.device)
		}
		vs[i] = v
	}
	return vs, nil
}

// holders are the non-nil slices, for the call to hold.
func holders[T Element](slices ...*cuda.Slice[T]) []cuda.Holder {
	var hs []cuda.Holder
	for _, s := range slices {
		if s != nil {
			hs = append(hs, s)
		}
	}
	return hs
}

func ptr(v view) unsafe.Pointer {
	// A device address, which NCCL only hands to the device: never a Go
	// pointer.
	return devptr.Of(v.ptr)
}

// AllReduce reduces send across the ranks with op and leaves the result in
// recv on every rank (ncclAllReduce). send and recv have the same length
// and may be the same slice (in place).
func AllReduce[T Element](c *Comm, send, recv *cuda.Slice[T], op Op) error {
	const name = "AllReduce"
	_, sh, ok := c.obj()
	if !ok {
		return closedErr(name)
	}
	if err := checkElement[T](name, sh, true); err != nil {
		return err
	}
	vs, err := operands(name, sh, []string{"send buffer", "receive buffer"}, []*cuda.Slice[T]{send, recv}, []bool{false, false})
	if err != nil {
		return err
	}
	if err := checkOp(name, op); err != nil {
		return err
	}
	if err := checkSameLen(name, vs[0].n, vs[1].n); err != nil {
		return err
	}
	return c.call(name, "ncclAllReduce", func(raw nccl.NcclComm_t, stream cu.CUstream) error {
		if vs[0].n == 0 {
			return nil // every rank passes the same count, so all skip NCCL alike
		}
		return nccl.AllReduce(ptr(vs[0]), ptr(vs[1]), uint64(vs[0].n), dataType[T](), nccl.NcclRedOp_t(op), raw, stream)
	}, holders(send, recv)...)
}

// checkOp refuses a reduction NCCL does not have.
func checkOp(name string, op Op) error {
	if !op.valid() {
		return invalid(name, "unknown reduction %v", op)
	}
	return nil
}

// checkSameLen refuses send and receive buffers of different lengths.
func checkSameLen(name string, send, recv int) error {
	if send != recv {
		return invalid(name, "send buffer of %d elements, receive buffer of %d: they must be the same", send, recv)
	}
	return nil
}

// AllGather gathers every rank's send into recv on every rank, rank r's at
// elements [r·send.Len(), (r+1)·send.Len()) (ncclAllGather): recv.Len()
// must be send.Len() times the number of ranks. In place, send is that
// part of recv.
func AllGather[T Element](c *Comm, send, recv *cuda.Slice[T]) error {
	const name = "AllGather"
	_, sh, ok := c.obj()
	if !ok {
		return closedErr(name)
	}
	if err := checkElement[T](name, sh, false); err != nil {
		return err
	}
	vs, err := operands(name, sh, []string{"send buffer", "receive buffer"}, []*cuda.Slice[T]{send, recv}, []bool{false, false})
	if err != nil {
		return err
	}
	if err := checkPerRank(name, "receive", vs[1].n, vs[0].n, sh.nranks); err != nil {
		return err
	}
	return c.call(name, "ncclAllGather", func(raw nccl.NcclComm_t, stream cu.CUstream) error {
		if vs[0].n == 0 {
			return nil // every rank passes the same count, so all skip NCCL alike
		}
		return nccl.AllGather(ptr(vs[0]), ptr(vs[1]), uint64(vs[0].n), dataType[T](), raw, stream)
	}, holders(send, recv)...)
}

// checkPerRank checks that the whole buffer (of which) is part times nranks.
func checkPerRank(name, which string, whole, part, nranks int) error {
	if part < 0 || whole != part*nranks {
		return invalid(name, "%s buffer of %d elements for %d ranks of %d: it must have %d", which, whole, nranks, part, part*nranks)
	}
	return nil
}

// ReduceScatter reduces send across the ranks with op and leaves part r of
// the result in recv of rank r (ncclReduceScatter): send.Len() must be
// recv.Len() times the number of ranks.
func ReduceScatter[T Element](c *Comm, send, recv *cuda.Slice[T], op Op) error {
	const name = "ReduceScatter"
	_, sh, ok := c.obj()
	if !ok {
		return closedErr(name)
	}
	if err := checkElement[T](name, sh, true); err != nil {
		return err
	}
	vs, err := operands(name, sh, []string{"send buffer", "receive buffer"}, []*cuda.Slice[T]{send, recv}, []bool{false, false})
	if err != nil {
		return err
	}
	if err := checkOp(name, op); err != nil {
		return err
	}
	if err := checkPerRank(name, "send", vs[0].n, vs[1].n, sh.nranks); err != nil {
		return err
	}
	return c.call(name, "ncclReduceScatter", func(raw nccl.NcclComm_t, stream cu.CUstream) error {
		if vs[1].n == 0 {
			return nil // every rank passes the same count, so all skip NCCL alike
		}
		return nccl.ReduceScatter(ptr(vs[0]), ptr(vs[1]), uint64(vs[1].n), dataType[T](), nccl.NcclRedOp_t(op), raw, stream)
	}, holders(send, recv)...)
}

// checkRank refuses a root or peer outside the communicator.
func checkRank(name, what string, r, nranks int) error {
	if r < 0 || r >= nranks {
		return invalid(name, "%s %d of a communicator of %d ranks", what, r, nranks)
	}
	return nil
}

// Broadcast copies send of rank root into recv of every rank
// (ncclBroadcast). send is read on the root only: other ranks may pass
// nil. On the root, send and recv have the same length, and may be the same
// slice.
func Broadcast[T Element](c *Comm, send, recv *cuda.Slice[T], root int) error {
	const name = "Broadcast"
	_, sh, ok := c.obj()
	if !ok {
		return closedErr(name)
	}
	if err := checkElement[T](name, sh, false); err != nil {
		return err
	}
	if err := checkRank(name, "root", root, sh.nranks); err != nil {
		return err
	}
	isRoot := sh.rank == root
	vs, err := operands(name, sh, []string{"send buffer", "receive buffer"}, []*cuda.Slice[T]{send, recv}, []bool{!isRoot, false})
	if err != nil {
		return err
	}
	if isRoot {
		if err := checkSameLen(name, vs[0].n, vs[1].n); err != nil {
			return err
		}
	}
	sendv := vs[0]
	if send == nil {
		sendv = vs[1]
	}
	return c.call(name, "ncclBroadcast", func(raw nccl.NcclComm_t, stream cu.CUstream) error {
		if vs[1].n == 0 {
			return nil // every rank passes the same count, so all skip NCCL alike
		}
		return nccl.Broadcast(ptr(sendv), ptr(vs[1]), uint64(vs[1].n), dataType[T](), int32(root), raw, stream)
	}, holders(send, recv)...)
}

// Reduce reduces send across the ranks with op into recv of rank root
// (ncclReduce). recv is written on the root only: other ranks may pass nil.
// On the root, send and recv have the same length, and may be the same
// slice.
func Reduce[T Element](c *Comm, send, recv *cuda.Slice[T], op Op, root int) error {
	const name = "Reduce"
	_, sh, ok := c.obj()
	if !ok {
		return closedErr(name)
	}
	if err := checkElement[T](name, sh, true); err != nil {
		return err
	}
	if err := checkRank(name, "root", root, sh.nranks); err != nil {
		return err
	}
	if err := checkOp(name, op); err != nil {
		return err
	}
	isRoot := sh.rank == root
	vs, err := operands(name, sh, []string{"send buffer", "receive buffer"}, []*cuda.Slice[T]{send, recv}, []bool{false, !isRoot})
	if err != nil {
		return err
	}
	if recv != nil {
		if err := checkSameLen(name, vs[0].n, vs[1].n); err != nil {
			return err
		}
	}
	recvv := vs[1]
	if recv == nil {
		recvv = vs[0] // not written off the root; NCCL wants an address
	}
	return c.call(name, "ncclReduce", func(raw nccl.NcclComm_t, stream cu.CUstream) error {
		if vs[0].n == 0 {
			return nil // every rank passes the same count, so all skip NCCL alike
		}
		return nccl.Reduce(ptr(vs[0]), ptr(recvv), uint64(vs[0].n), dataType[T](), nccl.NcclRedOp_t(op), int32(root), raw, stream)
	}, holders(send, recv)...)
}

// Send sends send to rank peer, which receives it with Recv of the same
// length (ncclSend). A Send and the Recv it meets run together: make both
// sides' calls inside a Group where a rank both sends and receives.
func Send[T Element](c *Comm, send *cuda.Slice[T], peer int) error {
	return pointToPoint(c, "Send", "ncclSend", "send buffer", send, peer, nccl.Send)
}

// Recv receives into recv what rank peer sends with Send (ncclRecv); the
// lengths must agree.
func Recv[T Element](c *Comm, recv *cuda.Slice[T], peer int) error {
	return pointToPoint(c, "Recv", "ncclRecv", "receive buffer", recv, peer, nccl.Recv)
}

// pointToPoint is Send and Recv: buf (what names it in errors) to or from
// rank peer through fn, which both functions' signatures fit.
func pointToPoint[T Element](c *Comm, name, fnName, what string, buf *cuda.Slice[T], peer int,
	fn func(unsafe.Pointer, uint64, nccl.NcclDataType_t, int32, nccl.NcclComm_t, cu.CUstream) error) error {
	_, sh, ok := c.obj()
	if !ok {
		return closedErr(name)
	}
	if err := checkElement[T](name, sh, false); err != nil {
		return err
	}
	if err := checkRank(name, "peer", peer, sh.nranks); err != nil {
		return err
	}
	vs, err := operands(name, sh, []string{what}, []*cuda.Slice[T]{buf}, []bool{false})
	if err != nil {
		return err
	}
	return c.call(name, fnName, func(raw nccl.NcclComm_t, stream cu.CUstream) error {
		if vs[0].n == 0 {
			return nil // every rank passes the same count, so all skip NCCL alike
		}
		return fn(ptr(vs[0]), uint64(vs[0].n), dataType[T](), int32(peer), raw, stream)
	}, buf)
}
