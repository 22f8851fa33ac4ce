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
// is not C's cublasGemmEx, so compare it with torch rather than with C).
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
		if gc.kind == "bf16" {
			mm := blas.Matmul{A: mat(b.a16, s), B: mat(b.b16, s), C: mat(b.c16, s),
				AType: blas.BFloat16, BType: blas.BFloat16, CType: blas.BFloat16}
			for i := 0; i < n; i++ {
				if err := lt.Run(mm, 1, 0, nil); err != nil {
					return err
				}
			}
			return nil
		}
		a, bm, c := mat(b.a32, s), mat(b.b32, s), mat(b.c32, s)
		for i := 0; i < n; i++ {
			if err := blas.Gemm[float32](h, 1, a, bm, 0, c); err != nil {
				return err
			}
		}
		return nil
	}
	return enqueue, func() error { return errors.Join(lt.Close(), h.Close()) }, nil
}
