//go:build linux && (amd64 || arm64)

package blas

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/devptr"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/cublaslt"
	"github.com/gocuda/gocuda/generated/libtypes"
)

// DataType is the element type of a matrix of a Matmul.
type DataType int

const (
	Float32    DataType = iota // IEEE float32
	Float16                    // IEEE half precision
	BFloat16                   // bfloat16: float32's exponent, 7 bits of mantissa
	Float8E4M3                 // FP8 with 4 exponent and 3 mantissa bits (Hopper and later)
	Float8E5M2                 // FP8 with 5 exponent and 2 mantissa bits (Hopper and later)
)

var dataTypes = [...]struct {
	name string
	size int
	cuda libtypes.CudaDataType
}{
	Float32:    {"float32", 4, libtypes.CUDA_R_32F},
	Float16:    {"float16", 2, libtypes.CUDA_R_16F},
	BFloat16:   {"bfloat16", 2, libtypes.CUDA_R_16BF},
	Float8E4M3: {"float8-e4m3", 1, libtypes.CUDA_R_8F_E4M3},
	Float8E5M2: {"float8-e5m2", 1, libtypes.CUDA_R_8F_E5M2},
}

func (d DataType) valid() bool { return d >= 0 && int(d) < len(dataTypes) }

func (d DataType) String() string {
	if !d.valid() {
		return fmt.Sprintf("DataType(%d)", int(d))
	}
	return dataTypes[d].name
}

// Size is the size of one element in bytes.
func (d DataType) Size() int {
	if !d.valid() {
		return 0
	}
	return dataTypes[d].size
}

func (d DataType) isFP8() bool { return d == Float8E4M3 || d == Float8E5M2 }

// Epilogue is what cuBLASLt applies to the product before writing it.
type Epilogue int

const (
	NoEpilogue Epilogue = iota
	ReLU                // max(x, 0)
	GELU                // the tanh approximation of GELU
	Bias                // x + bias
	BiasReLU            // max(x + bias, 0)
	BiasGELU            // GELU(x + bias)
)

var epilogues = [...]cublaslt.CublasLtEpilogue_t{
	NoEpilogue: cublaslt.CUBLASLT_EPILOGUE_DEFAULT,
	ReLU:       cublaslt.CUBLASLT_EPILOGUE_RELU,
	GELU:       cublaslt.CUBLASLT_EPILOGUE_GELU,
	Bias:       cublaslt.CUBLASLT_EPILOGUE_BIAS,
	BiasReLU:   cublaslt.CUBLASLT_EPILOGUE_RELU_BIAS,
	BiasGELU:   cublaslt.CUBLASLT_EPILOGUE_GELU_BIAS,
}

func (e Epilogue) hasBias() bool { return e == Bias || e == BiasReLU || e == BiasGELU }

// Matmul describes C = alpha·A·B + beta·C (then the epilogue) for
// cuBLASLt, or a batch of them as Gemm does (see Batch), with element
// types of its own per matrix: float16 or bfloat16 (cuda.Float16 and
// cuda.BFloat16 on the host) inputs accumulate in float32; FP8 inputs
// (AType and BType Float8E4M3, or one of them Float8E5M2) need Hopper or
// later, and cuBLASLt takes them only when, in its column-major terms, A
// is transposed and B is not: for a row-major C, A row-major (M×K) and B
// given as the transpose of a row-major N×K matrix (B = w.T(), a PyTorch
// Linear weight's layout).
type Matmul struct {
	A, B, C             Matrix
	AType, BType, CType DataType
	Epilogue            Epilogue
	// Bias holds one element of CType per element of a line of C: a row
	// of a row-major C (bias[j] is added to C[i][j]), a column of a
	// column-major one. A batch shares one bias.
	Bias cuda.Memory
	// TF32 lets float32 inputs use the tensor cores' TF32 format.
	TF32 bool
	// AScale and BScale, for FP8 inputs only, each hold one float32 that
	// A's or B's elements are multiplied by (the dequantization scales
	// of FP8 formats); nil is 1.
	AScale, BScale cuda.Memory
}

// holders are the memory of mm a call holds.
func (mm *Matmul) holders(extra ...cuda.Holder) []cuda.Holder {
	h := append([]cuda.Holder{mm.A.Mem, mm.B.Mem, mm.C.Mem}, extra...)
	for _, m := range []cuda.Memory{mm.Bias, mm.AScale, mm.BScale} {
		if given(m) {
			h = append(h, m)
		}
	}
	return h
}

// check validates mm before cuBLASLt is reached.
func (mm *Matmul) check(op string) error {
	if err := mm.checkShapes(op); err != nil {
		return err
	}
	return mm.checkMemory(op)
}

// checkShapes validates what of mm a prepared plan fixes: types, shapes,
// layouts, the epilogue, and which of Bias, AScale and BScale are given.
func (mm *Matmul) checkShapes(op string) error {
	for _, t := range []DataType{mm.AType, mm.BType, mm.CType} {
		if !t.valid() {
			return fmt.Errorf("blas: %s: unknown element type %v", op, t)
		}
	}
	if mm.Epilogue < 0 || int(mm.Epilogue) >= len(epilogues) {
		return fmt.Errorf("blas: %s: unknown epilogue %d", op, int(mm.Epilogue))
	}
	if err := gemmShapes(op, mm.A, mm.B, mm.C); err != nil {
		return err
	}
	if mm.AType.isFP8() != mm.BType.isFP8() {
		return fmt.Errorf("blas: %s: A is %v and B is %v: FP8 multiplies FP8 by FP8", op, mm.AType, mm.BType)
	}
	if mm.AType.isFP8() {
		if mm.AType == Float8E5M2 && mm.BType == Float8E5M2 {
			return fmt.Errorf("blas: %s: A and B are both %v: cuBLASLt multiplies FP8 as E4M3×E4M3, E4M3×E5M2 or E5M2×E4M3, not E5M2×E5M2", op, mm.AType)
		}
		if g := plan(mm.A, mm.B, mm.C); g.opA != cublas.CUBLAS_OP_T || g.opB != cublas.CUBLAS_OP_N {
			return fmt.Errorf("blas: %s: FP8 needs A row-major and B column-major for a row-major C (A column-major and B row-major for a column-major one); A is %v, B %v, C %v", op, mm.A.Layout, mm.B.Layout, mm.C.Layout)
		}
		if mm.CType.isFP8() {
			return fmt.Errorf("blas: %s: FP8 products are written as float32, float16 or bfloat16, not %v", op, mm.CType)
		}
	} else if given(mm.AScale) || given(mm.BScale) {
		name := "AScale"
		if !given(mm.AScale) {
			name = "BScale"
		}
		return fmt.Errorf("blas: %s: %s is for FP8 inputs, and A is %v", op, name, mm.AType)
	}
	switch {
	case mm.Epilogue.hasBias() && !given(mm.Bias):
		return fmt.Errorf("blas: %s: epilogue with bias but no Bias", op)
	case !mm.Epilogue.hasBias() && given(mm.Bias):
		return fmt.Errorf("blas: %s: a Bias, but the epilogue does not add one", op)
	}
	return nil
}

// checkMemory validates the memory of mm, whose shapes checkShapes
// accepted: each matrix's holds it, C shares none with A or B, the scales
// and the bias hold theirs.
func (mm *Matmul) checkMemory(op string) error {
	for _, x := range []struct {
		name string
		m    Matrix
		t    DataType
	}{{"A", mm.A, mm.AType}, {"B", mm.B, mm.BType}, {"C", mm.C, mm.CType}} {
		if err := x.m.checkMem(op, x.name, x.t.Size()); err != nil {
			return err
		}
	}
	for _, x := range []struct {
		name string
		m    cuda.Memory
	}{{"Bias", mm.Bias}, {"AScale", mm.AScale}, {"BScale", mm.BScale}} {
		if given(x.m) && !memOpen(x.m) {
			return fmt.Errorf("blas: %s: %s: %w", op, x.name, cuda.ErrClosed)
		}
	}
	for _, sc := range []struct {
		name string
		m    cuda.Memory
	}{{"AScale", mm.AScale}, {"BScale", mm.BScale}} {
		if given(sc.m) && sc.m.Size() < 4 {
			return fmt.Errorf("blas: %s: %s holds one float32 (4 bytes); its memory has %d", op, sc.name, sc.m.Size())
		}
	}
	if given(mm.Bias) {
		line := mm.C.Cols
		if mm.C.Layout == ColMajor {
			line = mm.C.Rows
		}
		if need := line * mm.CType.Size(); mm.Bias.Size() < need {
			return fmt.Errorf("blas: %s: the bias needs %d elements of %v (%d bytes), its memory has %d", op, line, mm.CType, need, mm.Bias.Size())
		}
	}
	return nil
}

// LtHandle is a cuBLASLt handle bound to a stream, with the workspace its
// multiplies use. It follows the rules of Handle.
type LtHandle struct {
	o *cuda.LibraryObject[ltState]
}

type ltState struct {
	h     cublaslt.CublasLtHandle_t
	ws    *cuda.DeviceMemory
	cache *ltCache // Run's prepared multiplies
}

// LtWorkspace is the workspace NewLt gives a handle: Workspace, as NVIDIA's
// recommendation for Hopper holds for cuBLASLt as for cuBLAS. Every
// multiply of the handle gets all of it: Run's heuristic, Prepare's, Tune's
// candidates and the search alike, so that a tuned algorithm is never
// compared with a default that had less.
const LtWorkspace = Workspace

// NewLt makes a cuBLASLt handle whose multiplies run on s, with a
// workspace of LtWorkspace bytes.
func NewLt(s *cuda.Stream) (*LtHandle, error) {
	const op = "blas.NewLt"
	o, err := newWithWorkspace(s, LtWorkspace, func(ws *cuda.DeviceMemory) (ltState, error) {
		var h cublaslt.CublasLtHandle_t
		if err := cublaslt.Create(&h); err != nil {
			return ltState{}, check(op, "cublasLtCreate", err)
		}
		return ltState{h: h, ws: ws, cache: &ltCache{}}, nil
	}, func(st ltState) error {
		st.cache.destroy()
		err := check("LtHandle.Close", "cublasLtDestroy", cublaslt.Destroy(st.h))
		return errors.Join(err, st.ws.Close())
	})
	if err != nil {
		return nil, err
	}
	return &LtHandle{o: o}, nil
}

func (lt *LtHandle) object() *cuda.LibraryObject[ltState] {
	if lt == nil {
		return nil
	}
	return lt.o
}

// Clone returns another handle to the same cuBLASLt handle.
func (lt *LtHandle) Clone() (*LtHandle, error) {
	o, err := lt.object().Clone()
	if err != nil {
		return nil, err
	}
	return &LtHandle{o: o}, nil
}

// Close releases this handle; the last Close destroys the cuBLASLt handle
// and frees its workspace.
func (lt *LtHandle) Close() error { return lt.object().Close() }

// Stream returns the handle's stream (owned by the handle), or nil once
// this handle is closed.
func (lt *LtHandle) Stream() *cuda.Stream { return lt.object().Stream() }

// SetStream moves the handle, and its clones, to s, a stream of the same
// context, after the calls in flight on it; see Handle.SetStream. The
// workspace stays the handle's: cuBLASLt takes it, like the stream, on
// every multiply.
func (lt *LtHandle) SetStream(s *cuda.Stream) error {
	return lt.object().SetStream("LtHandle.SetStream", s, func(ltState, cu.CUstream) error { return nil })
}

// Algo is one of cuBLASLt's algorithms for a Matmul, as its heuristic
// gives them: opaque, but plain data, so that a tuned choice can be saved
// and used again (see Plan).
type Algo struct {
	Data      [8]uint64
	Workspace uint64  // bytes of workspace it needs
	Waves     float32 // the heuristic's estimate of how well it fills the GPU
}

// Formulation is how a Matmul is put to cuBLASLt. Both compute the same
// C; cuBLASLt chooses its kernels for the problem it is given, so the two
// may run different ones.
type Formulation int

const (
	// ColumnOrder describes every matrix in column-major order, cuBLAS's
	// own (CUBLASLT_ORDER_COL): a column-major C is computed as it is, a
	// row-major one as Cᵀ = Bᵀ·Aᵀ. What Run does.
	ColumnOrder Formulation = iota
	// RowOrder describes every matrix in row-major order
	// (CUBLASLT_ORDER_ROW): a row-major C is computed as it is, a
	// column-major one as Cᵀ = Bᵀ·Aᵀ. Not for FP8 (cuBLASLt takes FP8
	// only column-major, A transposed and B not) nor with a bias (cuBLASLt
	// adds its bias along the other dimension of a row-order C).
	RowOrder
)

func (f Formulation) String() string {
	switch f {
	case ColumnOrder:
		return "col"
	case RowOrder:
		return "row"
	}
	return fmt.Sprintf("Formulation(%d)", int(f))
}

// order is the layout every matrix is read in.
func (f Formulation) order() Layout {
	if f == RowOrder {
		return RowMajor
	}
	return ColMajor
}

// check says whether mm can be put to cuBLASLt as f.
func (f Formulation) check(op string, mm *Matmul) error {
	switch {
	case f != ColumnOrder && f != RowOrder:
		return fmt.Errorf("blas: %s: unknown formulation %d", op, int(f))
	case f == RowOrder && mm.AType.isFP8():
		return fmt.Errorf("blas: %s: FP8 multiplies are column-order only", op)
	case f == RowOrder && given(mm.Bias):
		return fmt.Errorf("blas: %s: the row-order formulation takes no bias", op)
	}
	return nil
}

// descs are the cuBLASLt descriptors of one Matmul in one formulation.
type descs struct {
	op      cublaslt.CublasLtMatmulDesc_t
	a, b, c cublaslt.CublasLtMatrixLayout_t
	g       gemmPlan
	// ptrs are the bias and the scales of cuBLASLt's A and B, the
	// device addresses op holds (0: none).
	ptrs [3]uint64
}

func (d *descs) destroy() {
	if d.op != nil {
		_ = cublaslt.MatmulDescDestroy(d.op)
		d.op = nil
	}
	for _, l := range []*cublaslt.CublasLtMatrixLayout_t{&d.a, &d.b, &d.c} {
		if *l != nil {
			_ = cublaslt.MatrixLayoutDestroy(*l)
			*l = nil
		}
	}
}

// operands are the addresses a multiply passes to cublasLtMatmul, from
// rawAddrs: the first operand, the second, C, and the pointers its
// descriptor holds (bias, the first's scale, the second's), swapped with
// the operands when the formulation computes Cᵀ.
func operands(raw [6]uint64, swap bool) (pa, pb, pc unsafe.Pointer, ptrs [3]uint64) {
	if swap {
		raw[0], raw[1] = raw[1], raw[0]
		raw[4], raw[5] = raw[5], raw[4]
	}
	return devptr.Of(cu.CUdeviceptr(raw[0])), devptr.Of(cu.CUdeviceptr(raw[1])), devptr.Of(cu.CUdeviceptr(raw[2])), [3]uint64{raw[3], raw[4], raw[5]}
}

// ptrAttrs are the descriptor attributes of descs.ptrs.
var ptrAttrs = [3]cublaslt.CublasLtMatmulDescAttributes_t{
	cublaslt.CUBLASLT_MATMUL_DESC_BIAS_POINTER,
	cublaslt.CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
	cublaslt.CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
}

// setPtrs points d's descriptor at ptrs, those of its pointers that mm
// has (a zero one stays unset).
func (d *descs) setPtrs(ptrs [3]uint64) error {
	for i, p := range ptrs {
		if p == 0 || p == d.ptrs[i] {
			continue
		}
		v := p
		if err := cublaslt.MatmulDescSetAttribute(d.op, ptrAttrs[i], unsafe.Pointer(&v), 8); err != nil {
			return err
		}
		d.ptrs[i] = p
	}
	return nil
}

// describe makes the descriptors of mm in formulation f, whose device
// addresses were taken before the call holds them.
func describe(op string, mm *Matmul, raw [6]uint64, f Formulation) (*descs, error) {
	d := &descs{g: planIn(mm.A, mm.B, mm.C, f.order())}
	first, second := mm.AType, mm.BType
	if d.g.swap {
		first, second = second, first
	}
	_, _, _, ptrs := operands(raw, d.g.swap)
	compute, _, _, _ := searchTypes(mm, d.g.swap)
	fail := func(fn string, err error) (*descs, error) {
		d.destroy()
		return nil, check(op, fn, err)
	}
	// Out-parameters are locals: d holds Go pointers (its Matrix values'
	// Mem), so cgo refuses a pointer into it.
	var desc cublaslt.CublasLtMatmulDesc_t
	if err := cublaslt.MatmulDescCreate(&desc, compute, libtypes.CUDA_R_32F); err != nil {
		return fail("cublasLtMatmulDescCreate", err)
	}
	d.op = desc
	set := func(attr cublaslt.CublasLtMatmulDescAttributes_t, p unsafe.Pointer, n uintptr) error {
		return cublaslt.MatmulDescSetAttribute(d.op, attr, p, uint64(n))
	}
	ta, tb := int32(d.g.opA), int32(d.g.opB)
	epi := uint32(epilogues[mm.Epilogue])
	if err := errors.Join(
		set(cublaslt.CUBLASLT_MATMUL_DESC_TRANSA, unsafe.Pointer(&ta), 4),
		set(cublaslt.CUBLASLT_MATMUL_DESC_TRANSB, unsafe.Pointer(&tb), 4),
		set(cublaslt.CUBLASLT_MATMUL_DESC_EPILOGUE, unsafe.Pointer(&epi), 4),
	); err != nil {
		return fail("cublasLtMatmulDescSetAttribute", err)
	}
	if given(mm.Bias) {
		bt := int32(dataTypes[mm.CType].cuda)
		if err := set(cublaslt.CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, unsafe.Pointer(&bt), 4); err != nil {
			return fail("cublasLtMatmulDescSetAttribute", err)
		}
		if d.g.batch > 1 {
			var stride int64 // one bias for every product of the batch
			if err := set(cublaslt.CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, unsafe.Pointer(&stride), 8); err != nil {
				return fail("cublasLtMatmulDescSetAttribute", err)
			}
		}
	}
	// The bias and the FP8 scales, in cuBLASLt's terms: its A is the
	// first operand.
	if err := d.setPtrs(ptrs); err != nil {
		return fail("cublasLtMatmulDescSetAttribute", err)
	}
	order := int32(cublaslt.CUBLASLT_ORDER_COL)
	if f.order() == RowMajor {
		order = int32(cublaslt.CUBLASLT_ORDER_ROW)
	}
	layout := func(l *cublaslt.CublasLtMatrixLayout_t, t DataType, x Matrix) error {
		rows, cols := layoutDims(x, d.g.order)
		var out cublaslt.CublasLtMatrixLayout_t
		err := cublaslt.MatrixLayoutCreate(&out, dataTypes[t].cuda, uint64(rows), uint64(cols), int64(x.stride()))
		*l = out
		if err == nil && order != int32(cublaslt.CUBLASLT_ORDER_COL) {
			o := order
			err = cublaslt.MatrixLayoutSetAttribute(out, cublaslt.CUBLASLT_MATRIX_LAYOUT_ORDER, unsafe.Pointer(&o), 4)
		}
		return err
	}
	if err := errors.Join(
		layout(&d.a, first, d.g.a),
		layout(&d.b, second, d.g.b),
		layout(&d.c, mm.CType, mm.C),
	); err != nil {
		return fail("cublasLtMatrixLayoutCreate", err)
	}
	if d.g.batch > 1 {
		// Every layout has the batch's count; a single A or B has stride
		// 0, the one matrix for every product.
		batch := func(l cublaslt.CublasLtMatrixLayout_t, stride int64) error {
			count := d.g.batch
			return errors.Join(
				cublaslt.MatrixLayoutSetAttribute(l, cublaslt.CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, unsafe.Pointer(&count), 4),
				cublaslt.MatrixLayoutSetAttribute(l, cublaslt.CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, unsafe.Pointer(&stride), 8))
		}
		if err := errors.Join(batch(d.a, d.g.strideA), batch(d.b, d.g.strideB), batch(d.c, d.g.strideC)); err != nil {
			return fail("cublasLtMatrixLayoutSetAttribute", err)
		}
	}
	return d, nil
}

// layoutDims are the rows and columns of the matrix x's memory holds read
// in order, before the operation applies: a row-major R×C read in column
// order is a C×R matrix, and the other way round.
func layoutDims(x Matrix, order Layout) (rows, cols int) {
	if x.Layout != order {
		return x.Cols, x.Rows
	}
	return x.Rows, x.Cols
}

// Algorithms returns up to n of the algorithms cuBLASLt's heuristic gives
// for mm, its first choice first.
func (lt *LtHandle) Algorithms(mm Matmul, n int) ([]Algo, error) {
	return lt.AlgorithmsFor(mm, ColumnOrder, n)
}

// AlgorithmsFor is Algorithms for mm put to cuBLASLt as f.
func (lt *LtHandle) AlgorithmsFor(mm Matmul, f Formulation, n int) ([]Algo, error) {
	const op = "LtHandle.Algorithms"
	if err := mm.check(op); err != nil {
		return nil, err
	}
	if err := f.check(op, &mm); err != nil {
		return nil, err
	}
	if n < 1 || n > MaxAlgorithms {
		return nil, fmt.Errorf("blas: %s: asked for %d algorithms: want 1 to %d", op, n, MaxAlgorithms)
	}
	var algos []Algo
	raw := rawAddrs(&mm)
	err := lt.object().Call("blas."+op, func(st ltState) error {
		d, err := describe(op, &mm, raw, f)
		if err != nil {
			return err
		}
		defer d.destroy()
		algos, err = heuristic(op, st, d, n)
		return err
	}, mm.holders()...)
	return algos, err
}

// heuristic asks cuBLASLt's heuristic for up to n algorithms for d, with
// all of the handle's workspace.
func heuristic(op string, st ltState, d *descs, n int) ([]Algo, error) {
	var pref cublaslt.CublasLtMatmulPreference_t
	if err := cublaslt.MatmulPreferenceCreate(&pref); err != nil {
		return nil, check(op, "cublasLtMatmulPreferenceCreate", err)
	}
	defer cublaslt.MatmulPreferenceDestroy(pref)
	ws := uint64(st.ws.Size())
	if err := cublaslt.MatmulPreferenceSetAttribute(pref, cublaslt.CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, unsafe.Pointer(&ws), 8); err != nil {
		return nil, check(op, "cublasLtMatmulPreferenceSetAttribute", err)
	}
	results := make([]cublaslt.CublasLtMatmulHeuristicResult_t, n)
	var got int32
	if err := cublaslt.MatmulAlgoGetHeuristic(st.h, d.op, d.a, d.b, d.c, d.c, pref, int32(n), &results[0], &got); err != nil {
		return nil, check(op, "cublasLtMatmulAlgoGetHeuristic", err)
	}
	if got == 0 {
		return nil, check(op, "cublasLtMatmulAlgoGetHeuristic", cublas.CUBLAS_STATUS_NOT_SUPPORTED)
	}
	algos := make([]Algo, got)
	for i, r := range results[:got] {
		algos[i] = Algo{Data: r.Algo.Data, Workspace: r.WorkspaceSize, Waves: r.WavesCount}
	}
	return algos, nil
}

// rawAddrs takes the device addresses of mm's memory before a call holds
// them (see cuda.LibraryObject.Call): A, B, C, the bias, A's scale, B's.
func rawAddrs(mm *Matmul) [6]uint64 {
	return [6]uint64{uint64(memPtr(mm.A.Mem)), uint64(memPtr(mm.B.Mem)), uint64(memPtr(mm.C.Mem)), uint64(memPtr(mm.Bias)),
		uint64(memPtr(mm.AScale)), uint64(memPtr(mm.BScale))}
}

// Run computes mm on the handle's stream with algo, or with the heuristic's
// first choice when algo is nil (what a C program calling cuBLASLt does),
// in the ColumnOrder formulation. alpha and beta are float32, the scale type
// of every Matmul.
//
// The handle keeps the descriptors (and the heuristic's answer) of the
// multiplies Run has seen, up to LtRunCache of them, keyed by what Prepare
// fixes and the algorithm, so that a repeated multiply costs one
// cublasLtMatmul and the checks, as an LtPlan does; past that many, Run
// makes and destroys them on each call.
func (lt *LtHandle) Run(mm Matmul, alpha, beta float32, algo *Algo) error {
	const op = "LtHandle.Run"
	if err := mm.check(op); err != nil {
		return err
	}
	raw := rawAddrs(&mm)
	key := runKey{m: keyOf(&mm), algo: algo != nil}
	if algo != nil {
		key.a = *algo
	}
	return lt.object().CallOnStream("blas."+op, func(st ltState, stream cu.CUstream) error {
		if key.m.empty() {
			return nil
		}
		p, cached, err := st.cache.get(op, st, &mm, raw, key, algo)
		if err != nil {
			return err
		}
		if !cached {
			defer p.destroy()
		}
		return p.run(op, st, raw, alpha, beta, stream)
	}, mm.holders()...)
}

// matmul is one cublasLtMatmul of d with a, on the handle's workspace.
func matmul(op string, st ltState, d *descs, a *Algo, alpha, beta float32, pa, pb, pc unsafe.Pointer, stream cu.CUstream) error {
	if a.Workspace > uint64(st.ws.Size()) {
		return fmt.Errorf("blas: %s: the algorithm needs %d bytes of workspace, the handle has %d", op, a.Workspace, st.ws.Size())
	}
	algo := cublaslt.CublasLtMatmulAlgo_t{Data: a.Data}
	ws := devptr.Of(st.ws.Raw())
	return check(op, "cublasLtMatmul", cublaslt.Matmul(st.h, d.op, unsafe.Pointer(&alpha), pa, d.a, pb, d.b,
		unsafe.Pointer(&beta), pc, d.c, pc, d.c, &algo, ws, uint64(st.ws.Size()), stream))
}
