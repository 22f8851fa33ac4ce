//go:build linux && (amd64 || arm64)

package rand

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/curand"
)

// Float is the element types of the generating functions.
type Float interface{ ~float32 | ~float64 }

// Uniform fills mem with numbers uniformly distributed in (0, 1]
// (curandGenerateUniform for float32, curandGenerateUniformDouble for
// float64): every element of T, so mem's size must be a whole number of
// them. It returns when the work is queued on the generator's stream.
func Uniform[T Float](g *Generator, mem cuda.Memory) error {
	n, err := wholeCount[T]("Uniform", mem)
	if err != nil {
		return err
	}
	return uniform[T](g, "Uniform", mem, n)
}

// UniformN is Uniform for the first n elements of mem; the rest is left
// as it is.
func UniformN[T Float](g *Generator, mem cuda.Memory, n int) error {
	return uniform[T](g, "UniformN", mem, n)
}

// Normal fills mem with normally distributed numbers of the given mean and
// standard deviation (curandGenerateNormal for float32,
// curandGenerateNormalDouble for float64): every element of T, so mem's
// size must be a whole number of them, and that number must be even
// (cuRAND makes them in pairs). It returns when the work is queued on the
// generator's stream.
func Normal[T Float](g *Generator, mem cuda.Memory, mean, stddev T) error {
	n, err := wholeCount[T]("Normal", mem)
	if err != nil {
		return err
	}
	return normal(g, "Normal", mem, n, mean, stddev)
}

// NormalN is Normal for the first n elements of mem, n even; the rest is
// left as it is.
func NormalN[T Float](g *Generator, mem cuda.Memory, n int, mean, stddev T) error {
	return normal(g, "NormalN", mem, n, mean, stddev)
}

func uniform[T Float](g *Generator, op string, mem cuda.Memory, n int) error {
	size := sizeOf[T]()
	if err := checkCount[T](op, mem, n, false); err != nil {
		return err
	}
	p := mem.Ptr() // before the call: see cuda.LibraryObject.Call
	op = "rand." + op
	return g.call(op, func(raw curand.CurandGenerator_t) error {
		if n == 0 { // empty: nothing for cuRAND to do
			return nil
		}
		if size == 4 {
			return check(op, "curandGenerateUniform", curand.GenerateUniform(raw, (*float32)(devptr.Of(p)), uint64(n)))
		}
		return check(op, "curandGenerateUniformDouble", curand.GenerateUniformDouble(raw, (*float64)(devptr.Of(p)), uint64(n)))
	}, mem)
}

func normal[T Float](g *Generator, op string, mem cuda.Memory, n int, mean, stddev T) error {
	size := sizeOf[T]()
	if err := checkCount[T](op, mem, n, true); err != nil {
		return err
	}
	m, sd := float64(mean), float64(stddev)
	if math.IsNaN(m) || math.IsInf(m, 0) || math.IsNaN(sd) || math.IsInf(sd, 0) || sd < 0 {
		return fmt.Errorf("rand: %s: mean %v and standard deviation %v: want finite numbers, the deviation not negative", op, m, sd)
	}
	p := mem.Ptr()
	op = "rand." + op
	return g.call(op, func(raw curand.CurandGenerator_t) error {
		if n == 0 { // empty: nothing for cuRAND to do
			return nil
		}
		if size == 4 {
			return check(op, "curandGenerateNormal", curand.GenerateNormal(raw, (*float32)(devptr.Of(p)), uint64(n), float32(mean), float32(stddev)))
		}
		return check(op, "curandGenerateNormalDouble", curand.GenerateNormalDouble(raw, (*float64)(devptr.Of(p)), uint64(n), float64(mean), float64(stddev)))
	}, mem)
}

func sizeOf[T Float]() int {
	var v T
	return int(unsafe.Sizeof(v))
}

// typeName names T's size for errors.
func typeName(size int) string {
	if size == 4 {
		return "float32"
	}
	return "float64"
}

// open reports an error unless mem is open memory whose elements may be
// of T: a *cuda.Slice of T or untyped *cuda.DeviceMemory. An empty one is
// open: its context says so.
func open[T Float](op string, mem cuda.Memory) error {
	switch mem.(type) {
	case *cuda.Slice[T], *cuda.DeviceMemory:
	case nil:
		return fmt.Errorf("rand: %s: memory: %w", op, cuda.ErrClosed)
	default:
		return fmt.Errorf("rand: %s: a %T where %s elements are to be generated", op, mem, typeName(sizeOf[T]()))
	}
	if mem.Context().Raw() == 0 {
		return fmt.Errorf("rand: %s: memory: %w", op, cuda.ErrClosed)
	}
	return nil
}

// wholeCount is how many elements of T fill mem exactly.
func wholeCount[T Float](op string, mem cuda.Memory) (int, error) {
	size := sizeOf[T]()
	if err := open[T](op, mem); err != nil {
		return 0, err
	}
	bytes := mem.Size()
	if bytes%size != 0 {
		return 0, fmt.Errorf("rand: %s: the memory's %d bytes are not a whole number of %d-byte %s: use %sN", op, bytes, size, typeName(size), op)
	}
	return bytes / size, nil
}

// checkCount checks that n elements of T fit in mem, open, and, for
// normally distributed numbers (pairs), that n is even.
func checkCount[T Float](op string, mem cuda.Memory, n int, pairs bool) error {
	size := sizeOf[T]()
	switch {
	case n < 0:
		return fmt.Errorf("rand: %s: negative count %d", op, n)
	case pairs && n%2 != 0:
		return fmt.Errorf("rand: %s: %d numbers: cuRAND's pseudo-random generators make normally distributed numbers in pairs, so the count must be even", op, n)
	}
	if err := open[T](op, mem); err != nil {
		return err
	}
	if bytes := mem.Size(); n > bytes/size {
		return fmt.Errorf("rand: %s: %d %s need %d bytes, but the memory has %d", op, n, typeName(size), int64(n)*int64(size), bytes)
	}
	return nil
}
