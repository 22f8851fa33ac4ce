//go:build !cuda11080

package main

import "github.com/gocuda/gocuda/generated/cusparse"

// From CUDA 12 on, cuSPARSE's read-only operands take const descriptors,
// the same pointers.
func benchConstSp(d cusparse.CusparseSpMatDescr_t) cusparse.CusparseConstSpMatDescr_t {
	return cusparse.CusparseConstSpMatDescr_t(d)
}

func benchConstVec(d cusparse.CusparseDnVecDescr_t) cusparse.CusparseConstDnVecDescr_t {
	return cusparse.CusparseConstDnVecDescr_t(d)
}

func benchConstMat(d cusparse.CusparseDnMatDescr_t) cusparse.CusparseConstDnMatDescr_t {
	return cusparse.CusparseConstDnMatDescr_t(d)
}
