// Package rand is cuRAND for Go programs: device memory filled with
// pseudo-random numbers on a *cuda.Stream, with the safety of package cuda.
//
// A Generator is a cuRAND generator bound to a stream. It holds its own
// clone of the stream (and through it the context), follows package cuda's
// handle rules (Clone, Close per handle, the last Close destroys after the
// calls in flight, ErrClosed after Close and on nil, cleanup when dropped),
// and may be used from any goroutine: calls bind its context themselves,
// and calls on one generator, its clones included, take turns, since a
// cuRAND generator is not safe for two host threads at once.
//
//	g, err := rand.New(stream, rand.Philox, 42)
//	defer g.Close()
//	x, err := cuda.AllocSlice[float32](stream, n)
//	err = rand.Uniform[float32](g, x)             // every element, in (0, 1]
//	head, err := y.Sub(0, 1000)                   // y a *cuda.Slice[float64]
//	err = rand.Normal(g, head, 0.0, 1.0)          // its first 1000 elements
//
// The numbers are those of cuRAND's host API with its default ordering:
// the same kind and seed give the same numbers, call after call, on every
// run with the same cuRAND (and from its C API). Each call continues where the last one on the
// generator ended: two calls of n numbers give the 2n numbers of one.
// (On package cudatest's fake driver, a fake cuRAND gives numbers of the
// same algorithms and distributions, in another order: internal/fakecurand.)
// SetSeed restarts the sequence, SetOffset moves to a position in it.
// Generation is queued on the stream and returns at once:
// synchronize the stream, or copy on it, to see the numbers.
//
// The memory is a cuda.Memory: a *cuda.Slice of the function's element
// type (float32 or float64), a view of one made with Sub, or untyped
// *cuda.DeviceMemory; a Slice of another element type is refused. Uniform
// fills the whole memory, UniformN the first n elements; Normal and NormalN
// likewise. Empty memory, or a count of 0, is no work and no error. Counts are checked before cuRAND is called, against the size
// of the memory and against cuRAND's own rules (normally distributed
// numbers come in pairs from pseudo-random generators, so the count must
// be even): a mismatch is an error naming both.
//
// Errors from cuRAND carry its status (errors.Is(err,
// curand.CURAND_STATUS_LAUNCH_FAILURE)) and the function that failed; a
// missing library matches curand.ErrNoLibrary.
package rand
