//go:build linux && (amd64 || arm64)

package fft

import (
	"strings"
	"sync"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/cufft"
)

// Plan is a cuFFT plan bound to a stream: see the package comment.
//
// All methods are safe for concurrent use; transforms on one plan and its
// clones take turns.
type Plan struct {
	o  *cuda.LibraryObject[cufft.CufftHandle]
	sh *shared
}

// shared is what a plan's clones share besides the cuFFT plan.
type shared struct {
	shape
	work int64 // bytes of the work area cuFFT allocated
	// mu serializes the transforms: cuFFT allows one host thread at a
	// time on a plan.
	mu sync.Mutex
}

// Error is the error of a call into the library: the operation, the C
// function that failed and its cause, a cufft.CufftResult that errors.Is
// matches.
type Error = cuda.LibraryError

func check(op, fn string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Pkg: "fft", Op: strings.TrimPrefix(op, "fft."), Func: fn, Err: err}
}

var rawKinds = [...]cufft.CufftType{
	C2C: cufft.CUFFT_C2C,
	R2C: cufft.CUFFT_R2C,
	C2R: cufft.CUFFT_C2R,
	Z2Z: cufft.CUFFT_Z2Z,
	D2Z: cufft.CUFFT_D2Z,
	Z2D: cufft.CUFFT_Z2D,
}

// NewPlan1D makes a plan for batch transforms of n points each, one after
// the other in memory.
func NewPlan1D(s *cuda.Stream, n int, kind Kind, batch int) (*Plan, error) {
	return newPlan("fft.NewPlan1D", s, kind, []int{n}, batch)
}

// NewPlan2D makes a plan for batch transforms of nx×ny points each, ny
// the contiguous dimension.
func NewPlan2D(s *cuda.Stream, nx, ny int, kind Kind, batch int) (*Plan, error) {
	return newPlan("fft.NewPlan2D", s, kind, []int{nx, ny}, batch)
}

// NewPlan3D makes a plan for batch transforms of nx×ny×nz points each, nz
// the contiguous dimension.
func NewPlan3D(s *cuda.Stream, nx, ny, nz int, kind Kind, batch int) (*Plan, error) {
	return newPlan("fft.NewPlan3D", s, kind, []int{nx, ny, nz}, batch)
}

// newPlan checks the sizes and makes the plan (cufftCreate,
// cufftMakePlanMany64 with the packed layout, cufftSetStream). cuFFT
// allocates the plan's work area in the stream's context as it makes it.
// The 64-bit planner takes every size the 32-bit cufftPlan1d/2d/3d take,
// and transforms of 2³¹ elements or more besides.
func newPlan(op string, s *cuda.Stream, kind Kind, dims []int, batch int) (*Plan, error) {
	sh, err := newShape(op, kind, dims, batch)
	if err != nil {
		return nil, err
	}
	n := make([]int64, len(dims))
	for i, d := range dims {
		n[i] = int64(d)
	}
	var work uint64
	raw := s.Raw()
	o, err := cuda.NewLibraryObject(s, func() (cufft.CufftHandle, error) {
		var p cufft.CufftHandle
		if err := cufft.Create(&p); err != nil {
			return 0, check(op, "cufftCreate", err)
		}
		fail := func(fn string, err error) (cufft.CufftHandle, error) {
			_ = cufft.Destroy(p)
			return 0, check(op, fn, err)
		}
		if err := cufft.MakePlanMany64(p, int32(len(n)), &n[0], nil, 0, 0, nil, 0, 0, rawKinds[kind], int64(batch), &work); err != nil {
			return fail("cufftMakePlanMany64", err)
		}
		if err := cufft.SetStream(p, raw); err != nil {
			return fail("cufftSetStream", err)
		}
		return p, nil
	}, func(p cufft.CufftHandle) error {
		return check("Plan.Close", "cufftDestroy", cufft.Destroy(p))
	})
	if err != nil {
		return nil, err
	}
	return &Plan{o: o, sh: &shared{shape: sh, work: int64(work)}}, nil
}

func (p *Plan) object() *cuda.LibraryObject[cufft.CufftHandle] {
	if p == nil {
		return nil
	}
	return p.o
}

// Clone returns another handle to the same plan, to be closed on its own.
func (p *Plan) Clone() (*Plan, error) {
	o, err := p.object().Clone()
	if err != nil {
		return nil, err
	}
	return &Plan{o: o, sh: p.sh}, nil
}

// Close releases this handle, after the transforms in flight on it (their
// queuing, not their work on the device); the last Close destroys the
// cuFFT plan (cufftDestroy), freeing its work area, and releases its
// stream. As with device memory, synchronize the stream before the last
// Close if a transform may still be running.
func (p *Plan) Close() error { return p.object().Close() }

// Stream returns the plan's stream, owned by the plan (no Close needed),
// or nil once this handle is closed.
func (p *Plan) Stream() *cuda.Stream { return p.object().Stream() }

// Kind returns the plan's kind; 0 for a nil plan.
func (p *Plan) Kind() Kind {
	if p == nil || p.sh == nil {
		return 0
	}
	return p.sh.kind
}

// Sizes returns the sizes of one transform, slowest dimension first.
func (p *Plan) Sizes() []int {
	if p == nil || p.sh == nil {
		return nil
	}
	return append([]int(nil), p.sh.dims...)
}

// Batch returns the number of transforms one Exec computes.
func (p *Plan) Batch() int {
	if p == nil || p.sh == nil {
		return 0
	}
	return p.sh.batch
}

// InBytes returns the size in bytes of the input of one Exec, out of
// place: the whole batch.
func (p *Plan) InBytes() int {
	if p == nil || p.sh == nil {
		return 0
	}
	return int(p.sh.inBytes())
}

// OutBytes returns the size in bytes of the output of one Exec, out of
// place: the whole batch.
func (p *Plan) OutBytes() int {
	if p == nil || p.sh == nil {
		return 0
	}
	return int(p.sh.outBytes())
}

// WorkBytes returns the size of the work area cuFFT allocated for the
// plan when it was made.
func (p *Plan) WorkBytes() int {
	if p == nil || p.sh == nil {
		return 0
	}
	return int(p.sh.work)
}

// Exec queues the plan's transform of in into out on the plan's stream
// (cufftExecC2C, R2C, C2R, Z2Z, D2Z or Z2D) and returns. in and out may be
// the same memory (in place); otherwise they must not overlap. dir is
// Forward or Inverse for C2C and Z2Z; R2C and D2Z take Forward, C2R and
// Z2D Inverse. in and out are cuda.Memory: a *cuda.Slice of the kind's
// element types (complex64 for C2C, float32 in and complex64 out for R2C,
// and so on; a Slice of another type is refused), a Sub view of one, or
// untyped DeviceMemory. Their sizes are checked against the plan first:
// each must hold at least InBytes and OutBytes.
func (p *Plan) Exec(in, out cuda.Memory, dir Direction) error {
	const op = "Plan.Exec"
	if p != nil && p.sh != nil {
		if err := p.sh.checkExec(op, in, out, dir); err != nil {
			return err
		}
	}
	pi, po := devptr.Of(in.Ptr()), devptr.Of(out.Ptr()) // before the call: see cuda.LibraryObject.Call
	return p.object().Call("fft."+op, func(raw cufft.CufftHandle) error {
		p.sh.mu.Lock()
		defer p.sh.mu.Unlock()
		const fop = "fft." + op
		switch p.sh.kind {
		case C2C:
			return check(fop, "cufftExecC2C", cufft.ExecC2C(raw, (*cufft.CufftComplex)(pi), (*cufft.CufftComplex)(po), int32(dir)))
		case R2C:
			return check(fop, "cufftExecR2C", cufft.ExecR2C(raw, (*cufft.CufftReal)(pi), (*cufft.CufftComplex)(po)))
		case C2R:
			return check(fop, "cufftExecC2R", cufft.ExecC2R(raw, (*cufft.CufftComplex)(pi), (*cufft.CufftReal)(po)))
		case Z2Z:
			return check(fop, "cufftExecZ2Z", cufft.ExecZ2Z(raw, (*cufft.CufftDoubleComplex)(pi), (*cufft.CufftDoubleComplex)(po), int32(dir)))
		case D2Z:
			return check(fop, "cufftExecD2Z", cufft.ExecD2Z(raw, (*cufft.CufftDoubleReal)(pi), (*cufft.CufftDoubleComplex)(po)))
		default: // Z2D
			return check(fop, "cufftExecZ2D", cufft.ExecZ2D(raw, (*cufft.CufftDoubleComplex)(pi), (*cufft.CufftDoubleReal)(po)))
		}
	}, in, out)
}
