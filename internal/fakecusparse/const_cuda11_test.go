//go:build linux && (amd64 || arm64) && cuda11080

package fakecusparse_test

import "github.com/gocuda/gocuda/generated/cusparse"

// CUDA 11's cusparse.h has no const descriptors.
func spConst(m cusparse.CusparseSpMatDescr_t) cusparse.CusparseSpMatDescr_t { return m }

func vecConst(v cusparse.CusparseDnVecDescr_t) cusparse.CusparseDnVecDescr_t { return v }
