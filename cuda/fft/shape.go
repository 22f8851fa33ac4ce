package fft

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gocuda/gocuda/cuda"
)

// Kind is a transform's input and output types.
type Kind int

const (
	// C2C transforms complex64 to complex64.
	C2C Kind = iota + 1
	// R2C transforms float32 to complex64, forward.
	R2C
	// C2R transforms complex64 to float32, inverse.
	C2R
	// Z2Z transforms complex128 to complex128.
	Z2Z
	// D2Z transforms float64 to complex128, forward.
	D2Z
	// Z2D transforms complex128 to float64, inverse.
	Z2D
)

// kindInfo is what a Kind means for memory.
type kindInfo struct {
	name      string
	in, out   int       // element sizes in bytes
	inC, outC bool      // whether the input, the output is complex
	dir       Direction // the only direction allowed; 0: either
}

func (k kindInfo) real() bool { return !k.inC || !k.outC }

var kinds = [...]kindInfo{
	C2C: {"C2C", 8, 8, true, true, 0},
	R2C: {"R2C", 4, 8, false, true, Forward},
	C2R: {"C2R", 8, 4, true, false, Inverse},
	Z2Z: {"Z2Z", 16, 16, true, true, 0},
	D2Z: {"D2Z", 8, 16, false, true, Forward},
	Z2D: {"Z2D", 16, 8, true, false, Inverse},
}

func (k Kind) valid() bool { return k >= C2C && int(k) < len(kinds) }

func (k Kind) String() string {
	if k.valid() {
		return kinds[k].name
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Direction is the sign of the exponent of a transform.
type Direction int

const (
	// Forward is e^(−2πi·jk/n) (CUFFT_FORWARD).
	Forward Direction = -1
	// Inverse is e^(+2πi·jk/n), unscaled (CUFFT_INVERSE).
	Inverse Direction = 1
)

func (d Direction) String() string {
	switch d {
	case Forward:
		return "Forward"
	case Inverse:
		return "Inverse"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// elemName names an element of size bytes, complex or not.
// elemOf names the element type of a typed Slice (ok), for checkExec;
// untyped memory has none.
func elemOf(m cuda.Memory) (name string, ok bool) {
	switch m.(type) {
	case *cuda.Slice[float32]:
		return "float32", true
	case *cuda.Slice[float64]:
		return "float64", true
	case *cuda.Slice[complex64]:
		return "complex64", true
	case *cuda.Slice[complex128]:
		return "complex128", true
	case *cuda.DeviceMemory:
		return "", false
	}
	return "another type", true
}

func elemName(size int, complex bool) string {
	if complex {
		return "complex" + strconv.Itoa(size*8)
	}
	return "float" + strconv.Itoa(size*8)
}

// shape is a checked plan's transform: what Exec checks memory against.
type shape struct {
	kind  Kind
	dims  []int // slowest first
	batch int
	// n is the number of points of one transform; half that of the
	// complex side of a real transform (the last size cut to nz/2+1).
	n, half int64
}

// newShape checks a plan's sizes and works out its element counts.
func newShape(op string, kind Kind, dims []int, batch int) (shape, error) {
	if !kind.valid() {
		return shape{}, fmt.Errorf("fft: %s: unknown kind %v: want C2C, R2C, C2R, Z2Z, D2Z or Z2D", op, kind)
	}
	s := shape{kind: kind, dims: dims, batch: batch, n: 1, half: 1}
	if batch < 1 || batch > math.MaxInt32 {
		return shape{}, fmt.Errorf("fft: %s: batch %d: want 1 to 2³¹−1 transforms", op, batch)
	}
	for i, d := range dims {
		if d < 1 || d > math.MaxInt32 {
			return shape{}, fmt.Errorf("fft: %s: size %s: each size must be 1 to 2³¹−1", op, s.sizes())
		}
		// 16-byte elements of a whole batch must count in int64 bytes;
		// the bound is checked before the product so that it cannot wrap.
		if s.n > math.MaxInt64/16/int64(batch)/int64(d) {
			return shape{}, fmt.Errorf("fft: %s: size %s, batch %d: too large", op, s.sizes(), batch)
		}
		h := int64(d)
		if i == len(dims)-1 {
			h = int64(d/2 + 1)
		}
		s.n *= int64(d)
		s.half *= h
	}
	return s, nil
}

// sizes is "1024" or "64×32×16".
func (s shape) sizes() string {
	var b strings.Builder
	for i, d := range s.dims {
		if i > 0 {
			b.WriteString("×")
		}
		b.WriteString(strconv.Itoa(d))
	}
	return b.String()
}

func (s shape) String() string {
	str := s.kind.String() + " " + s.sizes()
	if s.batch != 1 {
		str += " (batch " + strconv.Itoa(s.batch) + ")"
	}
	return str
}

// inElems and outElems are the element counts of a whole batch's input and
// output, out of place.
func (s shape) inElems() int64 {
	if k := kinds[s.kind]; k.real() && k.inC {
		return s.half * int64(s.batch)
	}
	return s.n * int64(s.batch)
}

func (s shape) outElems() int64 {
	if k := kinds[s.kind]; k.real() && k.outC {
		return s.half * int64(s.batch)
	}
	return s.n * int64(s.batch)
}

func (s shape) inBytes() int64  { return s.inElems() * int64(kinds[s.kind].in) }
func (s shape) outBytes() int64 { return s.outElems() * int64(kinds[s.kind].out) }

// side describes the input or the output of a transform for errors.
func (s shape) side(input bool) string {
	k := kinds[s.kind]
	n, size, complex := s.outElems(), k.out, k.outC
	if input {
		n, size, complex = s.inElems(), k.in, k.inC
	}
	return fmt.Sprintf("%d %s (%d bytes)", n, elemName(size, complex), n*int64(size))
}

// checkExec checks a transform of in to out in direction dir before
// cuFFT: the direction the kind allows, and memory, open, that holds the
// input and the output (for a real transform in place, the complex side,
// which the padded real side fits in).
func (s shape) checkExec(op string, in, out cuda.Memory, dir Direction) error {
	k := kinds[s.kind]
	switch {
	case dir != Forward && dir != Inverse:
		return fmt.Errorf("fft: %s: unknown direction %v: want Forward or Inverse", op, dir)
	case k.dir != 0 && dir != k.dir:
		return fmt.Errorf("fft: %s: %v transforms are %v only", op, s.kind, k.dir)
	}
	// In place, a real transform's one memory is typed as its complex side.
	inPlace := in != nil && out != nil && in.Ptr() != 0 && in.Ptr() == out.Ptr()
	for _, m := range []struct {
		what    string
		mem     cuda.Memory
		size    int
		complex bool
	}{{"input", in, k.in, k.inC}, {"output", out, k.out, k.outC}} {
		if m.mem == nil || m.mem.Context().Raw() == 0 {
			return fmt.Errorf("fft: %s: %s: %w", op, m.what, cuda.ErrClosed)
		}
		if inPlace && !m.complex {
			continue
		}
		if name, ok := elemOf(m.mem); ok && name != elemName(m.size, m.complex) {
			return fmt.Errorf("fft: %s: %v: the %s is %s, not a %T", op, s.kind, m.what, elemName(m.size, m.complex), m.mem)
		}
	}
	inSize, outSize := in.Size(), out.Size()
	if in.Ptr() == out.Ptr() {
		need := max(s.inBytes(), s.outBytes())
		if int64(inSize) < need {
			what := "the input and output"
			if k.real() {
				what = "the complex side, with the real side's rows padded in it,"
			}
			return fmt.Errorf("fft: %s: %v in place: %s need %d bytes, but the memory has %d", op, s, what, need, inSize)
		}
		return nil
	}
	if need := s.inBytes(); int64(inSize) < need {
		return fmt.Errorf("fft: %s: %v: the input is %s, but its memory has %d bytes", op, s, s.side(true), inSize)
	}
	if need := s.outBytes(); int64(outSize) < need {
		return fmt.Errorf("fft: %s: %v: the output is %s, but its memory has %d bytes", op, s, s.side(false), outSize)
	}
	return nil
}
