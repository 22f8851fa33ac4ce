package main

import (
	"errors"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/blas"
)

func init() { gemmImpls = append(gemmImpls, gemmImpl{"go-cuda", openGemmBlas}) }

// openGemmBlas: the safe layer, cuda/blas. float32 and TF32 through
// blas.Gemm on a handle of its own bound to the stream (cublasSgemm, as C
// calls it); bfloat16 through blas.LtHandle.Run (cuBLASLt, the heuristic's
// first choice: the call the safe layer makes for mixed precision, which
// for bf16 is not C's cublasGemmEx: bf16lt compares it with C's
// cublasLtMatmul); fp8 through blas.LtHandle.Run with E4M3 A and B and a
// bfloat16 C, A row-major, B the transpose of the row-major W, C row-major
// (the layouts cuda/blas takes for FP8). Run keeps the descriptors and the
// heuristic's choice it made at its first call of a shape (its cache of
// prepared multiplies), as the safe layer does.
func openGemmBlas(b *gemmBench) (gemmEnqueue, func() error, error) {
	h, err := blas.New(b.s)
	if err != nil {
		return nil, nil, err
	}
	lt, err := blas.NewLt(b.s)
	if err != nil {
		h.Close()
		return nil, nil, err
	}
	kind := ""
	var cur gemmCase
	mat := func(m *cuda.DeviceMemory, n int) blas.Matrix {
		return blas.Matrix{Mem: m, Rows: n, Cols: n, Layout: blas.ColMajor}
	}
	enqueue := func(gc gemmCase, n int) error {
		if gc.kind != kind {
			if err := h.SetTF32(gc.kind == "tf32"); err != nil {
				return err
			}
			kind = gc.kind
		}
		s := gc.size
		var mm blas.Matmul
		switch gc.kind {
		case "bf16", "bf16lt":
			mm = blas.Matmul{A: mat(b.a16, s), B: mat(b.b16, s), C: mat(b.c16, s),
				AType: blas.BFloat16, BType: blas.BFloat16, CType: blas.BFloat16}
		case "fp8":
			row := func(m *cuda.DeviceMemory) blas.Matrix {
				return blas.Matrix{Mem: m, Rows: s, Cols: s, Layout: blas.RowMajor}
			}
			mm = blas.Matmul{A: row(b.a8), B: row(b.b8).T(), C: row(b.c16),
				AType: blas.Float8E4M3, BType: blas.Float8E4M3, CType: blas.BFloat16}
		default:
			a, bm, c := mat(b.a32, s), mat(b.b32, s), mat(b.c32, s)
			for i := 0; i < n; i++ {
				if err := blas.Gemm[float32](h, 1, a, bm, 0, c); err != nil {
					return err
				}
			}
			return nil
		}
		if gc != cur && isLtKind(gc.kind) {
			// A new case (its untimed warm-up): the algorithm Run will
			// take, for the INFO line C and Go raw print too.
			algos, err := lt.Algorithms(mm, 1)
			if err != nil {
				return ltUnsupported(err)
			}
			ltAlgoInfo(gc, "go-cuda", algos[0].Data, algos[0].Workspace)
			cur = gc
		}
		for i := 0; i < n; i++ {
			if err := lt.Run(mm, 1, 0, nil); err != nil {
				return ltUnsupported(err)
			}
		}
		return nil
	}
	return enqueue, func() error { return errors.Join(lt.Close(), h.Close()) }, nil
}
