package main

/*
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>

// The cuBLASLt entry points the C side calls, resolved by Go through
// generated/cublaslt's Proc (the same library the bindings loaded).
typedef struct {
	uintptr_t desc_create, desc_destroy, desc_set, layout_create, layout_destroy,
		pref_create, pref_destroy, pref_set, heuristic, matmul;
} gg_lt_procs;

// cublasLtMatmulAlgo_t and cublasLtMatmulHeuristicResult_t (96 bytes).
typedef struct { uint64_t data[8]; } gg_lt_algo;
typedef struct {
	gg_lt_algo algo;
	size_t workspace_size;
	int state;
	float waves;
	int reserved[4];
} gg_lt_result;

// Their prototypes as the C ABI sees them: handles and descriptors are
// pointers, enums ints.
typedef int (*gg_lt_desc_create_t)(void **, int, int);
typedef int (*gg_lt_destroy_t)(void *);
typedef int (*gg_lt_set_t)(void *, int, const void *, size_t);
typedef int (*gg_lt_layout_create_t)(void **, int, uint64_t, uint64_t, int64_t);
typedef int (*gg_lt_pref_create_t)(void **);
typedef int (*gg_lt_heuristic_t)(uintptr_t, void *, void *, void *, void *, void *, void *, int, gg_lt_result *, int *);
typedef int (*gg_lt_matmul_t)(uintptr_t, void *, const void *, const void *, void *, const void *, void *,
	const void *, const void *, void *, void *, void *, const gg_lt_algo *, void *, size_t, uintptr_t);

// gg_lt_spec is one multiply in cuBLASLt's column-major terms, with the
// header's enum values (filled in by Go from the generated constants).
typedef struct {
	int compute, scale_type, transa, transb, epilogue;
	int attr_transa, attr_transb, attr_epilogue, attr_max_workspace;
	int dtype[3];                 // A, B, C (= D)
	uint64_t rows[3], cols[3];    // as the matrices lie in memory
	int64_t ld[3];
} gg_lt_spec;

// gg_lt_state is what the C side keeps between calls, in C memory: the
// entry points, the handle and workspace it shares with Go raw, and the
// descriptors and algorithm of the current case.
typedef struct {
	gg_lt_procs p;
	uintptr_t handle, workspace;
	uint64_t workspace_size;
	void *desc, *layout[3];
	gg_lt_algo algo;
	uint64_t algo_workspace;
} gg_lt_state;

static void gg_lt_release(gg_lt_state *st) {
	if (st->desc) ((gg_lt_destroy_t)st->p.desc_destroy)(st->desc);
	st->desc = NULL;
	for (int i = 0; i < 3; i++) {
		if (st->layout[i]) ((gg_lt_destroy_t)st->p.layout_destroy)(st->layout[i]);
		st->layout[i] = NULL;
	}
}

// The steps of gg_lt_make, for the error message of the one that failed.
enum { GG_LT_DESC_CREATE = 1, GG_LT_DESC_SET, GG_LT_LAYOUT_CREATE, GG_LT_PREF_CREATE, GG_LT_PREF_SET, GG_LT_HEURISTIC };

// gg_lt_make does what a C program does before its loop of
// cublasLtMatmul: the matmul descriptor (compute type, scale type,
// TRANSA, TRANSB, epilogue), the three matrix layouts (D is C), a
// preference bounding the workspace, and the heuristic's first algorithm.
// It returns 0, a cublasStatus_t with *step the call that failed, or -1
// when the heuristic has no algorithm.
static int gg_lt_make(gg_lt_state *st, const gg_lt_spec *s, int *step) {
	gg_lt_release(st);
	int r;
	*step = GG_LT_DESC_CREATE;
	if ((r = ((gg_lt_desc_create_t)st->p.desc_create)(&st->desc, s->compute, s->scale_type))) return r;
	*step = GG_LT_DESC_SET;
	int32_t ta = s->transa, tb = s->transb;
	uint32_t epi = (uint32_t)s->epilogue;
	gg_lt_set_t set = (gg_lt_set_t)st->p.desc_set;
	if ((r = set(st->desc, s->attr_transa, &ta, sizeof ta))) return r;
	if ((r = set(st->desc, s->attr_transb, &tb, sizeof tb))) return r;
	if ((r = set(st->desc, s->attr_epilogue, &epi, sizeof epi))) return r;
	*step = GG_LT_LAYOUT_CREATE;
	for (int i = 0; i < 3; i++)
		if ((r = ((gg_lt_layout_create_t)st->p.layout_create)(&st->layout[i], s->dtype[i], s->rows[i], s->cols[i], s->ld[i]))) return r;
	*step = GG_LT_PREF_CREATE;
	void *pref = NULL;
	if ((r = ((gg_lt_pref_create_t)st->p.pref_create)(&pref))) return r;
	*step = GG_LT_PREF_SET;
	uint64_t ws = st->workspace_size;
	r = ((gg_lt_set_t)st->p.pref_set)(pref, s->attr_max_workspace, &ws, sizeof ws);
	if (r == 0) {
		*step = GG_LT_HEURISTIC;
		gg_lt_result res;
		int got = 0;
		r = ((gg_lt_heuristic_t)st->p.heuristic)(st->handle, st->desc, st->layout[0], st->layout[1], st->layout[2], st->layout[2],
			pref, 1, &res, &got);
		if (r == 0 && got < 1) r = -1;
		if (r == 0) {
			st->algo = res.algo;
			st->algo_workspace = res.workspace_size;
		}
	}
	((gg_lt_destroy_t)st->p.pref_destroy)(pref);
	return r;
}

// gg_lt_loop makes n calls of cublasLtMatmul with the state's descriptors
// and algorithm, D = C, alpha 1 and beta 0 on its stack, the whole
// workspace, as a C program's loop would, within one cgo call.
static int gg_lt_loop(const gg_lt_state *st, uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t stream, int n) {
	float alpha = 1, beta = 0;
	gg_lt_matmul_t mm = (gg_lt_matmul_t)st->p.matmul;
	for (int i = 0; i < n; i++) {
		int r = mm(st->handle, st->desc, &alpha, (const void *)a, st->layout[0], (const void *)b, st->layout[1],
			&beta, (const void *)c, st->layout[2], (void *)c, st->layout[2], &st->algo,
			(void *)st->workspace, st->workspace_size, stream);
		if (r) return r;
	}
	return 0;
}

static gg_lt_state *gg_lt_new(void) { return calloc(1, sizeof(gg_lt_state)); }

static void gg_lt_free(gg_lt_state *st) {
	gg_lt_release(st);
	free(st);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/blas"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/cublaslt"
	"github.com/gocuda/gocuda/generated/libtypes"
)

// isLtKind says whether kind is one of the cases that go through cuBLASLt
// in every implementation, C the reference as for the others: C and Go raw
// call cublasLtMatmul with descriptors made once per case (this file),
// cuda/blas through LtHandle.Run (gemmblas.go).
//
//   - bf16lt: bfloat16 A, B and C, float32 accumulation, the operation of
//     bf16 (column-major, no transposes): cuda/blas's Matmul with every
//     matrix column-major, which it maps to TRANSA = TRANSB = N.
//   - fp8: E4M3 A and B into a bfloat16 C, float32 accumulation. FP8 needs
//     A transposed and B not in cuBLASLt's column-major terms ("TN"), so
//     the operation is the one cuda/blas makes of a row-major C (M×N) = A
//     (row-major M×K) · B, B given as the transpose of a row-major N×K
//     matrix W (a Linear layer's weight): in column-major terms Cᵀ = W·Aᵀ,
//     the first operand W (its memory a column-major K×N, TRANSA = T), the
//     second A (a column-major K×M, TRANSB = N), C a column-major N×M.
func isLtKind(kind string) bool { return kind == "bf16lt" || kind == "fp8" }

// gemmLtWorkspace is the workspace of every cuBLASLt implementation:
// cuda/blas's, which C and Go raw match.
const gemmLtWorkspace = blas.LtWorkspace

// ltMatmul is a case as cuBLASLt takes it: operations, and per matrix
// (A, B and C = D, in cuBLASLt's order) the element type, the shape it has
// in memory in column-major terms, its leading dimension and its address.
type ltMatmul struct {
	transA, transB cublas.CublasOperation_t
	types          [3]libtypes.CudaDataType
	rows, cols     [3]uint64
	ld             [3]int64
	ptr            [3]cu.CUdeviceptr
}

func (b *gemmBench) ltMatmul(gc gemmCase) ltMatmul {
	s := uint64(gc.size)
	sq := ltMatmul{rows: [3]uint64{s, s, s}, cols: [3]uint64{s, s, s}, ld: [3]int64{int64(s), int64(s), int64(s)}}
	switch gc.kind {
	case "bf16lt":
		sq.transA, sq.transB = cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N
		sq.types = [3]libtypes.CudaDataType{libtypes.CUDA_R_16BF, libtypes.CUDA_R_16BF, libtypes.CUDA_R_16BF}
		sq.ptr = [3]cu.CUdeviceptr{b.a16.Raw(), b.b16.Raw(), b.c16.Raw()}
	case "fp8":
		// Square, so every shape is s×s with leading dimension s; the first
		// operand is W (b8), the second A (a8).
		sq.transA, sq.transB = cublas.CUBLAS_OP_T, cublas.CUBLAS_OP_N
		sq.types = [3]libtypes.CudaDataType{libtypes.CUDA_R_8F_E4M3, libtypes.CUDA_R_8F_E4M3, libtypes.CUDA_R_16BF}
		sq.ptr = [3]cu.CUdeviceptr{b.b8.Raw(), b.a8.Raw(), b.c16.Raw()}
	default:
		panic("not a cuBLASLt case: " + gc.kind)
	}
	return sq
}

// ltUnsupported turns the heuristic's "no algorithm" (a GPU without FP8,
// say) into errGemmUnsupported.
func ltUnsupported(err error) error {
	if errors.Is(err, cublas.CUBLAS_STATUS_NOT_SUPPORTED) {
		return fmt.Errorf("%w: %w", errGemmUnsupported, err)
	}
	return err
}

// newLtShared makes the cuBLASLt handle and the workspace (LtWorkspace
// bytes, as cuda/blas gives its handles) that C and Go raw share, as they
// share the cuBLAS handle.
func (b *gemmBench) newLtShared() {
	must("cuBLASLt", cublaslt.Load())
	var h cublaslt.CublasLtHandle_t
	must("cublasLtCreate", cublaslt.Create(&h))
	b.lt = h
	var err error
	b.ltWS, err = cuda.Alloc(b.ctx, gemmLtWorkspace)
	must("cuda.Alloc", err)
	version, err := cublaslt.GetVersion()
	must("cublasLtGetVersion", err)
	fmt.Printf("INFO gemm cublaslt=%s cublaslt_version=%d workspace=%d\n", cublaslt.LibraryPath(), version, gemmLtWorkspace)
}

// openGemmCLt is the cuBLASLt side of openGemmC: descriptors made in C,
// once per case, and a C loop of cublasLtMatmul.
func openGemmCLt(b *gemmBench) (func(gc gemmCase, n int) error, func(), error) {
	var p C.gg_lt_procs
	for _, e := range []struct {
		f    *C.uintptr_t
		name string
	}{
		{&p.desc_create, "cublasLtMatmulDescCreate"}, {&p.desc_destroy, "cublasLtMatmulDescDestroy"},
		{&p.desc_set, "cublasLtMatmulDescSetAttribute"}, {&p.layout_create, "cublasLtMatrixLayoutCreate"},
		{&p.layout_destroy, "cublasLtMatrixLayoutDestroy"}, {&p.pref_create, "cublasLtMatmulPreferenceCreate"},
		{&p.pref_destroy, "cublasLtMatmulPreferenceDestroy"}, {&p.pref_set, "cublasLtMatmulPreferenceSetAttribute"},
		{&p.heuristic, "cublasLtMatmulAlgoGetHeuristic"}, {&p.matmul, "cublasLtMatmul"},
	} {
		f, err := cublaslt.Proc(e.name)
		if err != nil {
			return nil, nil, err
		}
		*e.f = C.uintptr_t(f)
	}
	st := C.gg_lt_new()
	if st == nil {
		return nil, nil, errors.New("out of C memory")
	}
	st.p = p
	st.handle = C.uintptr_t(b.lt)
	st.workspace = C.uintptr_t(b.ltWS.Raw())
	st.workspace_size = C.uint64_t(b.ltWS.Size())
	steps := map[C.int]string{
		C.GG_LT_DESC_CREATE: "cublasLtMatmulDescCreate", C.GG_LT_DESC_SET: "cublasLtMatmulDescSetAttribute",
		C.GG_LT_LAYOUT_CREATE: "cublasLtMatrixLayoutCreate", C.GG_LT_PREF_CREATE: "cublasLtMatmulPreferenceCreate",
		C.GG_LT_PREF_SET: "cublasLtMatmulPreferenceSetAttribute", C.GG_LT_HEURISTIC: "cublasLtMatmulAlgoGetHeuristic",
	}
	stream := C.uintptr_t(uintptr(b.stream))
	var cur gemmCase
	var m ltMatmul
	enqueue := func(gc gemmCase, n int) error {
		if gc != cur {
			// A new case (its untimed warm-up): describe it.
			cur = gemmCase{}
			m = b.ltMatmul(gc)
			spec := C.gg_lt_spec{
				compute: C.int(cublas.CUBLAS_COMPUTE_32F), scale_type: C.int(libtypes.CUDA_R_32F),
				transa: C.int(m.transA), transb: C.int(m.transB), epilogue: C.int(cublaslt.CUBLASLT_EPILOGUE_DEFAULT),
				attr_transa: C.int(cublaslt.CUBLASLT_MATMUL_DESC_TRANSA), attr_transb: C.int(cublaslt.CUBLASLT_MATMUL_DESC_TRANSB),
				attr_epilogue:      C.int(cublaslt.CUBLASLT_MATMUL_DESC_EPILOGUE),
				attr_max_workspace: C.int(cublaslt.CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES),
			}
			for i := range 3 {
				spec.dtype[i] = C.int(m.types[i])
				spec.rows[i], spec.cols[i], spec.ld[i] = C.uint64_t(m.rows[i]), C.uint64_t(m.cols[i]), C.int64_t(m.ld[i])
			}
			var step C.int
			switch r := C.gg_lt_make(st, &spec, &step); {
			case r == -1:
				return ltUnsupported(fmt.Errorf("%s: %w", steps[C.GG_LT_HEURISTIC], cublas.CUBLAS_STATUS_NOT_SUPPORTED))
			case r != 0:
				return ltUnsupported(fmt.Errorf("%s: %w", steps[step], cublas.CublasStatus_t(r)))
			}
			if uint64(st.algo_workspace) > uint64(st.workspace_size) {
				return fmt.Errorf("the algorithm needs %d bytes of workspace, there are %d", st.algo_workspace, st.workspace_size)
			}
			var algo [8]uint64
			for i, w := range st.algo.data {
				algo[i] = uint64(w)
			}
			ltAlgoInfo(gc, "c", algo, uint64(st.algo_workspace))
			cur = gc
		}
		if r := C.gg_lt_loop(st, C.uintptr_t(m.ptr[0]), C.uintptr_t(m.ptr[1]), C.uintptr_t(m.ptr[2]), stream, C.int(n)); r != 0 {
			return fmt.Errorf("cublasLtMatmul: %w", cublas.CublasStatus_t(r))
		}
		return nil
	}
	return enqueue, func() { C.gg_lt_free(st) }, nil
}

// ltAlgoInfo prints the algorithm an implementation's heuristic gave for
// a case: the same descriptors and workspace give the same one.
func ltAlgoInfo(gc gemmCase, impl string, algo [8]uint64, workspace uint64) {
	fmt.Printf("INFO gemm op=%s impl=%s lt_algo=%x lt_algo_workspace=%d\n", gc.op, impl, algo, workspace)
}

// goLtPlan is the Go raw side's descriptors and algorithm of one case.
type goLtPlan struct {
	desc   cublaslt.CublasLtMatmulDesc_t
	layout [3]cublaslt.CublasLtMatrixLayout_t
	algo   cublaslt.CublasLtMatmulAlgo_t
}

func (p *goLtPlan) release() {
	if p.desc != nil {
		_ = cublaslt.MatmulDescDestroy(p.desc)
	}
	for _, l := range p.layout {
		if l != nil {
			_ = cublaslt.MatrixLayoutDestroy(l)
		}
	}
	*p = goLtPlan{}
}

// make is gg_lt_make through the generated bindings.
func (p *goLtPlan) make(h cublaslt.CublasLtHandle_t, m ltMatmul, workspace uint64) (uint64, error) {
	p.release()
	var desc cublaslt.CublasLtMatmulDesc_t
	if err := cublaslt.MatmulDescCreate(&desc, cublas.CUBLAS_COMPUTE_32F, libtypes.CUDA_R_32F); err != nil {
		return 0, fmt.Errorf("cublasLtMatmulDescCreate: %w", err)
	}
	p.desc = desc
	ta, tb := int32(m.transA), int32(m.transB)
	epi := uint32(cublaslt.CUBLASLT_EPILOGUE_DEFAULT)
	if err := errors.Join(
		cublaslt.MatmulDescSetAttribute(desc, cublaslt.CUBLASLT_MATMUL_DESC_TRANSA, unsafe.Pointer(&ta), 4),
		cublaslt.MatmulDescSetAttribute(desc, cublaslt.CUBLASLT_MATMUL_DESC_TRANSB, unsafe.Pointer(&tb), 4),
		cublaslt.MatmulDescSetAttribute(desc, cublaslt.CUBLASLT_MATMUL_DESC_EPILOGUE, unsafe.Pointer(&epi), 4),
	); err != nil {
		return 0, fmt.Errorf("cublasLtMatmulDescSetAttribute: %w", err)
	}
	for i := range 3 {
		var l cublaslt.CublasLtMatrixLayout_t
		if err := cublaslt.MatrixLayoutCreate(&l, m.types[i], m.rows[i], m.cols[i], m.ld[i]); err != nil {
			return 0, fmt.Errorf("cublasLtMatrixLayoutCreate: %w", err)
		}
		p.layout[i] = l
	}
	var pref cublaslt.CublasLtMatmulPreference_t
	if err := cublaslt.MatmulPreferenceCreate(&pref); err != nil {
		return 0, fmt.Errorf("cublasLtMatmulPreferenceCreate: %w", err)
	}
	defer cublaslt.MatmulPreferenceDestroy(pref)
	ws := workspace
	if err := cublaslt.MatmulPreferenceSetAttribute(pref, cublaslt.CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, unsafe.Pointer(&ws), 8); err != nil {
		return 0, fmt.Errorf("cublasLtMatmulPreferenceSetAttribute: %w", err)
	}
	var res cublaslt.CublasLtMatmulHeuristicResult_t
	var got int32
	if err := cublaslt.MatmulAlgoGetHeuristic(h, desc, p.layout[0], p.layout[1], p.layout[2], p.layout[2], pref, 1, &res, &got); err != nil {
		return 0, fmt.Errorf("cublasLtMatmulAlgoGetHeuristic: %w", err)
	}
	if got < 1 {
		return 0, fmt.Errorf("cublasLtMatmulAlgoGetHeuristic: %w", cublas.CUBLAS_STATUS_NOT_SUPPORTED)
	}
	p.algo = res.Algo
	return res.WorkspaceSize, nil
}

// openGemmRawLt is the cuBLASLt side of openGemmRaw: descriptors made once
// per case through generated/cublaslt, and a Go loop of cublaslt.Matmul.
func openGemmRawLt(b *gemmBench) (func(gc gemmCase, n int) error, func(), error) {
	h := b.lt
	ws := devUnsafe(b.ltWS.Raw())
	wsSize := uint64(b.ltWS.Size())
	alpha, beta := float32(1), float32(0)
	var p goLtPlan
	var cur gemmCase
	var pa, pb, pc unsafe.Pointer
	enqueue := func(gc gemmCase, n int) error {
		if gc != cur {
			cur = gemmCase{}
			m := b.ltMatmul(gc)
			need, err := p.make(h, m, wsSize)
			if err != nil {
				return ltUnsupported(err)
			}
			if need > wsSize {
				return fmt.Errorf("the algorithm needs %d bytes of workspace, there are %d", need, wsSize)
			}
			ltAlgoInfo(gc, "go-raw", p.algo.Data, need)
			pa, pb, pc = devUnsafe(m.ptr[0]), devUnsafe(m.ptr[1]), devUnsafe(m.ptr[2])
			cur = gc
		}
		for i := 0; i < n; i++ {
			if err := cublaslt.Matmul(h, p.desc, unsafe.Pointer(&alpha), pa, p.layout[0], pb, p.layout[1],
				unsafe.Pointer(&beta), pc, p.layout[2], pc, p.layout[2], &p.algo, ws, wsSize, b.stream); err != nil {
				return fmt.Errorf("cublasLtMatmul: %w", err)
			}
		}
		return nil
	}
	return enqueue, p.release, nil
}
