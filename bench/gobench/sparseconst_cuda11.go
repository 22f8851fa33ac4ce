//go:build cuda11080

package main

import "github.com/gocuda/gocuda/generated/cusparse"

// CUDA 11's cuSPARSE has no const descriptors.
func benchConstSp(d cusparse.CusparseSpMatDescr_t) cusparse.CusparseSpMatDescr_t { return d }

func benchConstVec(d cusparse.CusparseDnVecDescr_t) cusparse.CusparseDnVecDescr_t { return d }

func benchConstMat(d cusparse.CusparseDnMatDescr_t) cusparse.CusparseDnMatDescr_t { return d }
