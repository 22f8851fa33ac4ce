//go:build linux && (amd64 || arm64)

package rand

import (
	"fmt"
	"strings"
	"sync"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/curand"
)

// Generator is a cuRAND generator bound to a stream: see the package
// comment.
//
// All methods are safe for concurrent use; calls on one generator and its
// clones take turns. SetSeed and SetOffset change the generator for every
// handle to it.
type Generator struct {
	o  *cuda.LibraryObject[curand.CurandGenerator_t]
	sh *shared
}

// shared is what a generator's clones share besides the cuRAND object.
type shared struct {
	kind Kind
	// mu serializes the calls on the generator: cuRAND keeps its
	// position in the sequence on the host and allows one thread at a
	// time.
	mu sync.Mutex
}

// Error is the error of a call into the library: the operation, the C
// function that failed and its cause, a curand.CurandStatus_t that errors.Is
// matches.
type Error = cuda.LibraryError

func check(op, fn string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Pkg: "rand", Op: strings.TrimPrefix(op, "rand."), Func: fn, Err: err}
}

var rawKinds = [...]curand.CurandRngType_t{
	Philox:   curand.CURAND_RNG_PSEUDO_PHILOX4_32_10,
	XORWOW:   curand.CURAND_RNG_PSEUDO_XORWOW,
	MRG32k3a: curand.CURAND_RNG_PSEUDO_MRG32K3A,
	MT19937:  curand.CURAND_RNG_PSEUDO_MT19937,
}

// New makes a generator of the given kind, seeded with seed, whose work
// goes to s (curandCreateGenerator, curandSetStream,
// curandSetPseudoRandomGeneratorSeed). The generator keeps its own clone
// of s: closing s does not end it.
func New(s *cuda.Stream, kind Kind, seed uint64) (*Generator, error) {
	const op = "rand.New"
	if !kind.valid() {
		return nil, fmt.Errorf("rand: %s: unknown generator kind %v", op, kind)
	}
	raw := s.Raw()
	o, err := cuda.NewLibraryObject(s, func() (curand.CurandGenerator_t, error) {
		var g curand.CurandGenerator_t
		if err := curand.CreateGenerator(&g, rawKinds[kind]); err != nil {
			return 0, check(op, "curandCreateGenerator", err)
		}
		fail := func(fn string, err error) (curand.CurandGenerator_t, error) {
			_ = curand.DestroyGenerator(g)
			return 0, check(op, fn, err)
		}
		if err := curand.SetStream(g, raw); err != nil {
			return fail("curandSetStream", err)
		}
		if err := curand.SetPseudoRandomGeneratorSeed(g, seed); err != nil {
			return fail("curandSetPseudoRandomGeneratorSeed", err)
		}
		return g, nil
	}, func(g curand.CurandGenerator_t) error {
		return check("Generator.Close", "curandDestroyGenerator", curand.DestroyGenerator(g))
	})
	if err != nil {
		return nil, err
	}
	return &Generator{o: o, sh: &shared{kind: kind}}, nil
}

func (g *Generator) object() *cuda.LibraryObject[curand.CurandGenerator_t] {
	if g == nil {
		return nil
	}
	return g.o
}

// call runs fn on the raw generator, with the generator and hold held and
// its context current (cuda.LibraryObject.Call), after the calls of
// other goroutines on the generator.
func (g *Generator) call(op string, fn func(curand.CurandGenerator_t) error, hold ...cuda.Holder) error {
	return g.object().Call(op, func(raw curand.CurandGenerator_t) error {
		g.sh.mu.Lock()
		defer g.sh.mu.Unlock()
		return fn(raw)
	}, hold...)
}

// Clone returns another handle to the same generator, to be closed on its
// own. The two share the sequence: a call on either continues where the
// last call on either ended.
func (g *Generator) Clone() (*Generator, error) {
	o, err := g.object().Clone()
	if err != nil {
		return nil, err
	}
	return &Generator{o: o, sh: g.sh}, nil
}

// Close releases this handle, after the calls in flight on it (their
// queuing, not their work on the device); the last Close destroys the
// cuRAND generator (curandDestroyGenerator), freeing its state on the
// device, and releases its stream. As with device memory, synchronize the
// stream before the last Close if generation may still be running.
func (g *Generator) Close() error { return g.object().Close() }

// Stream returns the generator's stream, owned by the generator (no Close
// needed), or nil once this handle is closed.
func (g *Generator) Stream() *cuda.Stream { return g.object().Stream() }

// Kind returns the generator's algorithm; Philox for a nil generator.
func (g *Generator) Kind() Kind {
	if g == nil || g.sh == nil {
		return Philox
	}
	return g.sh.kind
}

// SetSeed restarts the generator with a seed, the one it has or another:
// the numbers that follow are those a new generator of its kind with this
// seed would give (curandSetPseudoRandomGeneratorSeed, and
// curandSetGeneratorOffset to 0 where the kind has an offset). cuRAND sets
// the generator up again on the next call, which is then slower.
func (g *Generator) SetSeed(seed uint64) error {
	const op = "Generator.SetSeed"
	return g.call(op, func(raw curand.CurandGenerator_t) error {
		if !g.sh.kind.hasOffset() {
			// MT19937 restarts only when its seed changes: setting
			// the seed it has does nothing. Another seed first makes
			// the change.
			if err := curand.SetPseudoRandomGeneratorSeed(raw, ^seed); err != nil {
				return check(op, "curandSetPseudoRandomGeneratorSeed", err)
			}
		}
		if err := curand.SetPseudoRandomGeneratorSeed(raw, seed); err != nil {
			return check(op, "curandSetPseudoRandomGeneratorSeed", err)
		}
		if g.sh.kind.hasOffset() {
			return check(op, "curandSetGeneratorOffset", curand.SetGeneratorOffset(raw, 0))
		}
		return nil
	})
}

// SetOffset moves the generator to position offset of its seed's
// sequence (curandSetGeneratorOffset): the numbers that follow are those
// from number offset on, the ones a new generator with the seed gives
// after its first offset numbers. Generators with the same seed and
// offsets far enough apart give disjoint parts of one sequence. MT19937
// has no offset: SetOffset fails on it without calling cuRAND.
func (g *Generator) SetOffset(offset uint64) error {
	const op = "Generator.SetOffset"
	if g != nil && g.sh != nil && !g.sh.kind.hasOffset() {
		return fmt.Errorf("rand: %s: %v generators have no offset", op, g.sh.kind)
	}
	return g.call(op, func(raw curand.CurandGenerator_t) error {
		return check(op, "curandSetGeneratorOffset", curand.SetGeneratorOffset(raw, offset))
	})
}
