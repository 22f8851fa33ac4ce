//go:build linux && (amd64 || arm64)

package fakecublas_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/libtypes"
)

// encode writes v as elements of t.
func encode(t libtypes.CudaDataType, v []float64) []byte {
	var out []byte
	for _, x := range v {
		switch t {
		case libtypes.CUDA_R_32F:
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(float32(x)))
		case libtypes.CUDA_R_64F:
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(x))
		case libtypes.CUDA_R_16F:
			out = binary.LittleEndian.AppendUint16(out, cuda.ToFloat16(float32(x)).Bits())
		case libtypes.CUDA_R_16BF:
			out = binary.LittleEndian.AppendUint16(out, cuda.ToBFloat16(float32(x)).Bits())
		}
	}
	return out
}

func decode(t libtypes.CudaDataType, b []byte) []float64 {
	var out []float64
	for len(b) > 0 {
		switch t {
		case libtypes.CUDA_R_32F:
			out = append(out, float64(math.Float32frombits(binary.LittleEndian.Uint32(b))))
			b = b[4:]
		case libtypes.CUDA_R_64F:
			out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(b)))
			b = b[8:]
		case libtypes.CUDA_R_16F:
			out = append(out, float64(cuda.Float16FromBits(binary.LittleEndian.Uint16(b)).Float32()))
			b = b[2:]
		case libtypes.CUDA_R_16BF:
			out = append(out, float64(cuda.BFloat16FromBits(binary.LittleEndian.Uint16(b)).Float32()))
			b = b[2:]
		}
	}
	return out
}

func elemSize(t libtypes.CudaDataType) int {
	switch t {
	case libtypes.CUDA_R_64F:
		return 8
	case libtypes.CUDA_R_32F:
		return 4
	}
	return 2
}

// scalarBytes is a host scalar of the compute type's scale type.
func scalarBytes(compute cublas.CublasComputeType_t, v float64) unsafe.Pointer {
	switch compute {
	case cublas.CUBLAS_COMPUTE_64F:
		return unsafe.Pointer(&v)
	case cublas.CUBLAS_COMPUTE_16F:
		h := cuda.ToFloat16(float32(v)).Bits()
		return unsafe.Pointer(&h)
	}
	f := float32(v)
	return unsafe.Pointer(&f)
}

var ops = []cublas.CublasOperation_t{cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_T, cublas.CUBLAS_OP_C}

// TestGemmExMatchesCPU runs cublasGemmEx for each type, compute type and
// pair of operations on padded column-major matrices of small integers,
// whose products are exact in every type: the result must equal the
// CPU's exactly, and the padding of C stay untouched.
func TestGemmExMatchesCPU(t *testing.T) {
	e := setup(t)
	const m, n, k = 5, 3, 7
	for _, tc := range []struct {
		typ     libtypes.CudaDataType
		compute cublas.CublasComputeType_t
	}{
		{libtypes.CUDA_R_32F, cublas.CUBLAS_COMPUTE_32F},
		{libtypes.CUDA_R_32F, cublas.CUBLAS_COMPUTE_32F_FAST_TF32},
		{libtypes.CUDA_R_64F, cublas.CUBLAS_COMPUTE_64F},
		{libtypes.CUDA_R_16F, cublas.CUBLAS_COMPUTE_32F},
		{libtypes.CUDA_R_16F, cublas.CUBLAS_COMPUTE_16F},
		{libtypes.CUDA_R_16BF, cublas.CUBLAS_COMPUTE_32F},
	} {
		for _, opA := range ops {
			for _, opB := range ops {
				ar, ac := m, k
				if opA != cublas.CUBLAS_OP_N {
					ar, ac = k, m
				}
				br, bc := k, n
				if opB != cublas.CUBLAS_OP_N {
					br, bc = n, k
				}
				a, b, c := small(ar, ac, ar+2, 1), small(br, bc, br+1, 2), small(m, n, m+3, 3)
				want := cpuGemm(opA, opB, m, n, k, 2, a, b, -1, c)
				pa, pb, pc := upload(t, encode(tc.typ, a.v)), upload(t, encode(tc.typ, b.v)), upload(t, encode(tc.typ, c.v))
				err := cublas.GemmEx(e.h, opA, opB, m, n, k, scalarBytes(tc.compute, 2), raw(pa), tc.typ, int32(a.ld), raw(pb), tc.typ, int32(b.ld),
					scalarBytes(tc.compute, -1), raw(pc), tc.typ, int32(c.ld), tc.compute, cublas.CUBLAS_GEMM_DEFAULT)
				if err != nil {
					t.Fatalf("%v %v op %d×%d: %v", tc.typ, tc.compute, opA, opB, err)
				}
				got := decode(tc.typ, download[byte](e, pc, len(c.v)*elemSize(tc.typ)))
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%v %v op %d×%d: C[%d] = %v, want %v", tc.typ, tc.compute, opA, opB, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestTF32RoundsFloat32Inputs multiplies 1+2⁻¹² and 1+2⁻¹¹+2⁻¹³ by 1:
// float32 keeps them, TF32 (10 bits of mantissa) rounds them to nearest,
// 1 and 1+2⁻¹⁰, whether asked by the math mode or by the compute type.
func TestTF32RoundsFloat32Inputs(t *testing.T) {
	e := setup(t)
	x := []float32{1 + 1.0/4096, 1 + 1.0/2048 + 1.0/8192}
	rounded := []float32{1, 1 + 1.0/1024}
	pa, pb, pc := upload(t, x), upload(t, []float32{1}), upload(t, []float32{0, 0})
	one, zero := float32(1), float32(0)
	sgemm := func() []float32 {
		if err := cublas.Sgemm(e.h, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, 2, 1, 1, &one, dev[float32](pa), 2, dev[float32](pb), 1, &zero, dev[float32](pc), 2); err != nil {
			t.Fatal(err)
		}
		return download[float32](e, pc, 2)
	}
	same := func(what string, got, want []float32) {
		t.Helper()
		if got[0] != want[0] || got[1] != want[1] {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	same("float32", sgemm(), x)
	if err := cublas.SetMathMode(e.h, cublas.CUBLAS_TF32_TENSOR_OP_MATH); err != nil {
		t.Fatal(err)
	}
	same("CUBLAS_TF32_TENSOR_OP_MATH", sgemm(), rounded)
	if err := cublas.SetMathMode(e.h, cublas.CUBLAS_DEFAULT_MATH); err != nil {
		t.Fatal(err)
	}
	err := cublas.GemmEx(e.h, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, 2, 1, 1, unsafe.Pointer(&one), raw(pa), libtypes.CUDA_R_32F, 2, raw(pb), libtypes.CUDA_R_32F, 1,
		unsafe.Pointer(&zero), raw(pc), libtypes.CUDA_R_32F, 2, cublas.CUBLAS_COMPUTE_32F_FAST_TF32, cublas.CUBLAS_GEMM_DEFAULT)
	if err != nil {
		t.Fatal(err)
	}
	same("CUBLAS_COMPUTE_32F_FAST_TF32", download[float32](e, pc, 2), rounded)
}

// TestNarrowResultsRoundToNearestEven writes the products of random
// float16 and bfloat16 pairs (an outer product, K 1) in their type: each
// must be the float32 product rounded as package cuda rounds.
func TestNarrowResultsRoundToNearestEven(t *testing.T) {
	e := setup(t)
	r := rand.New(rand.NewPCG(5, 6))
	const m, n = 64, 48
	for _, typ := range []libtypes.CudaDataType{libtypes.CUDA_R_16F, libtypes.CUDA_R_16BF} {
		a, b := make([]float64, m), make([]float64, n)
		for i := range a {
			a[i] = decode(typ, encode(typ, []float64{r.NormFloat64() * 30}))[0]
		}
		for i := range b {
			b[i] = decode(typ, encode(typ, []float64{r.NormFloat64() * 30}))[0]
		}
		pa, pb, pc := upload(t, encode(typ, a)), upload(t, encode(typ, b)), upload(t, make([]byte, m*n*2))
		one, zero := float32(1), float32(0)
		err := cublas.GemmEx(e.h, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_T, m, n, 1, unsafe.Pointer(&one), raw(pa), typ, m, raw(pb), typ, n,
			unsafe.Pointer(&zero), raw(pc), typ, m, cublas.CUBLAS_COMPUTE_32F, cublas.CUBLAS_GEMM_DEFAULT)
		if err != nil {
			t.Fatal(err)
		}
		got := download[byte](e, pc, m*n*2)
		for j := 0; j < n; j++ {
			for i := 0; i < m; i++ {
				want := encode(typ, []float64{float64(float32(a[i] * b[j]))})
				if g := got[2*(i+j*m) : 2*(i+j*m)+2]; g[0] != want[0] || g[1] != want[1] {
					t.Fatalf("%v: %v·%v = bits %x, want %x", typ, a[i], b[j], g, want)
				}
			}
		}
	}
}

// TestBatchedGemms runs a strided batch with gaps (cublasSgemmStridedBatched),
// one of float16 (cublasGemmStridedBatchedEx) and one through arrays of
// pointers (cublasGemmBatchedEx, bfloat16), each against the CPU.
func TestBatchedGemms(t *testing.T) {
	e := setup(t)
	const m, n, k, batch = 4, 3, 5, 3
	a, b, c := make([]colMajor, batch), make([]colMajor, batch), make([]colMajor, batch)
	for i := range batch {
		a[i], b[i], c[i] = small(k, m, k, 10+i), small(k, n, k, 20+i), small(m, n, m, 30+i)
	}
	// Each matrix of the strided batches after a gap of 3 elements.
	pack := func(ms []colMajor) ([]float64, int64) {
		stride := len(ms[0].v) + 3
		out := make([]float64, stride*len(ms))
		for i, x := range ms {
			copy(out[i*stride:], x.v)
		}
		return out, int64(stride)
	}
	av, sa := pack(a)
	bv, sb := pack(b)
	cv, sc := pack(c)
	check := func(name string, got []float64, stride int64) {
		t.Helper()
		for i := range batch {
			want := cpuGemm(cublas.CUBLAS_OP_T, cublas.CUBLAS_OP_N, m, n, k, 1, a[i], b[i], 2, c[i])
			for j, w := range want {
				if g := got[int64(i)*stride+int64(j)]; g != w {
					t.Fatalf("%s: product %d, C[%d] = %v, want %v", name, i, j, g, w)
				}
			}
		}
	}
	one, two := float32(1), float32(2)
	pa, pb, pc := upload(t, encode(libtypes.CUDA_R_32F, av)), upload(t, encode(libtypes.CUDA_R_32F, bv)), upload(t, encode(libtypes.CUDA_R_32F, cv))
	if err := cublas.SgemmStridedBatched(e.h, cublas.CUBLAS_OP_T, cublas.CUBLAS_OP_N, m, n, k, &one, dev[float32](pa), k, sa, dev[float32](pb), k, sb,
		&two, dev[float32](pc), m, sc, batch); err != nil {
		t.Fatal(err)
	}
	check("cublasSgemmStridedBatched", decode(libtypes.CUDA_R_32F, download[byte](e, pc, len(cv)*4)), sc)

	h := libtypes.CUDA_R_16F
	pa, pb, pc = upload(t, encode(h, av)), upload(t, encode(h, bv)), upload(t, encode(h, cv))
	if err := cublas.GemmStridedBatchedEx(e.h, cublas.CUBLAS_OP_T, cublas.CUBLAS_OP_N, m, n, k, unsafe.Pointer(&one), raw(pa), h, k, sa,
		raw(pb), h, k, sb, unsafe.Pointer(&two), raw(pc), h, m, sc, batch, cublas.CUBLAS_COMPUTE_32F, cublas.CUBLAS_GEMM_DEFAULT); err != nil {
		t.Fatal(err)
	}
	check("cublasGemmStridedBatchedEx", decode(h, download[byte](e, pc, len(cv)*2)), sc)

	bf := libtypes.CUDA_R_16BF
	pa, pb, pc = upload(t, encode(bf, av)), upload(t, encode(bf, bv)), upload(t, encode(bf, cv))
	ptrs := func(base cu.CUdeviceptr, stride int64) cu.CUdeviceptr {
		p := make([]uint64, batch)
		for i := range p {
			p[i] = uint64(base) + uint64(i)*uint64(stride)*2
		}
		return upload(t, p)
	}
	arrA, arrB, arrC := ptrs(pa, sa), ptrs(pb, sb), ptrs(pc, sc)
	if err := cublas.GemmBatchedEx(e.h, cublas.CUBLAS_OP_T, cublas.CUBLAS_OP_N, m, n, k, unsafe.Pointer(&one), dev[unsafe.Pointer](arrA), bf, k,
		dev[unsafe.Pointer](arrB), bf, k, unsafe.Pointer(&two), dev[unsafe.Pointer](arrC), bf, m, batch, cublas.CUBLAS_COMPUTE_32F, cublas.CUBLAS_GEMM_DEFAULT); err != nil {
		t.Fatal(err)
	}
	check("cublasGemmBatchedEx", decode(bf, download[byte](e, pc, len(cv)*2)), sc)
}

// TestDevicePointerMode reads alpha and beta from device memory when the
// product runs, not when it is queued.
func TestDevicePointerMode(t *testing.T) {
	e := setup(t)
	if err := cublas.SetPointerMode(e.h, cublas.CUBLAS_POINTER_MODE_DEVICE); err != nil {
		t.Fatal(err)
	}
	a, b, c := small(3, 2, 3, 1), small(2, 4, 2, 2), small(3, 4, 3, 3)
	pa, pb, pc := upload(t, encode(libtypes.CUDA_R_64F, a.v)), upload(t, encode(libtypes.CUDA_R_64F, b.v)), upload(t, encode(libtypes.CUDA_R_64F, c.v))
	scal := upload(t, []float64{3, 0.5})
	if err := cublas.Dgemm(e.h, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, 3, 4, 2, dev[float64](scal), dev[float64](pa), 3, dev[float64](pb), 2,
		dev[float64](scal+8), dev[float64](pc), 3); err != nil {
		t.Fatal(err)
	}
	want := cpuGemm(cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, 3, 4, 2, 3, a, b, 0.5, c)
	for i, g := range download[float64](e, pc, len(want)) {
		if g != want[i] {
			t.Fatalf("C[%d] = %v, want %v", i, g, want[i])
		}
	}
}
