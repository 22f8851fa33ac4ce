// Package fft is cuFFT for Go programs: fast Fourier transforms of device
// memory on a *cuda.Stream, with the safety of package cuda.
//
// A Plan is a cuFFT plan for one transform shape (1-, 2- or 3-D, a batch
// of them, one Kind) bound to a stream. It holds its own clone of the
// stream (and through it the context), follows package cuda's handle rules
// (Clone, Close per handle, the last Close destroys after the calls in
// flight, ErrClosed after Close and on nil, cleanup when dropped), and may
// be used from any goroutine: calls bind its context themselves, and
// transforms on one plan, its clones included, take turns, since a cuFFT
// plan and its work area serve one transform at a time.
//
//	p, err := fft.NewPlan1D(stream, 1024, fft.C2C, 8) // 8 signals of 1024 complex64
//	defer p.Close()
//	in, err := cuda.AllocSliceFrom(stream, signals)   // signals: a []complex64 of 8·1024
//	out, err := cuda.AllocSlice[complex64](stream, 8*1024)
//	err = p.Exec(in, out, fft.Forward)                 // out = DFT(in), per signal
//	err = p.Exec(out, out, fft.Inverse)                // in place: out = N·in
//	err = out.CopyTo(signals)                          // back in the Go slice
//
// The memory is a cuda.Memory: a *cuda.Slice of the kind's element types
// (complex64, complex128, float32 and float64 are elements of package
// cuda, with CUDA's layout of cuComplex and cuDoubleComplex), a Sub view
// of one, or untyped *cuda.DeviceMemory. A Slice of another type than the
// kind's is refused before cuFFT; a real transform in place takes one
// memory, typed (if at all) as its complex side. A plan of no points is an
// error: every size and the batch must be positive.
//
// # Kinds and layouts
//
// C2C, R2C and C2R transform complex64 and float32 elements; Z2Z, D2Z and
// Z2D complex128 and float64. Sizes are given slowest dimension first, as Go
// lays out [nx][ny][nz]T: the last size is the contiguous one. Batches
// follow one another in memory, packed.
//
// A real-to-complex transform (R2C, D2Z) of n real numbers gives the
// n/2+1 complex coefficients that are not redundant (Hermitian symmetry):
// in more than one dimension, each row along the last dimension of nz
// reals gives nz/2+1 complex numbers, so an nx×ny×nz real array becomes an
// nx×ny×(nz/2+1) complex one. The complex-to-real transforms (C2R, Z2D)
// go back: they take that half and give the real array. InBytes and
// OutBytes are the sizes in bytes of a transform's input and output.
// Complex-to-real transforms overwrite their input, out of place too.
//
// A transform is in place when in and out are the same memory. For the
// real kinds, the real array then lies in the complex array's memory with
// each row along the last dimension, of m reals, padded to 2·(m/2+1), and
// the memory must hold the complex array.
//
// # Direction and scale
//
// Forward computes X[k] = Σ x[j]·e^(−2πi·jk/n), Inverse the same with
// e^(+2πi·jk/n). Neither scales: an inverse after a forward transform
// gives n·x (n the product of the sizes). R2C and D2Z are forward only,
// C2R and Z2D inverse only.
//
// On package cudatest's fake driver, a fake cuFFT computes the same
// transforms on the host, in double precision (internal/fakecufft).
//
// Sizes are checked against the plan before cuFFT is called: memory that
// does not hold a transform's input or output is an error naming the
// sizes expected and given. Errors from cuFFT carry its result
// (errors.Is(err, cufft.CUFFT_INVALID_SIZE)) and the function that failed;
// a missing library matches cufft.ErrNoLibrary.
package fft
