//go:build linux && (amd64 || arm64) && !cuda11080

package fakecusparse_test

import "github.com/gocuda/gocuda/generated/cusparse"

func spConst(m cusparse.CusparseSpMatDescr_t) cusparse.CusparseConstSpMatDescr_t {
	return cusparse.CusparseConstSpMatDescr_t(m)
}

func vecConst(v cusparse.CusparseDnVecDescr_t) cusparse.CusparseConstDnVecDescr_t {
	return cusparse.CusparseConstDnVecDescr_t(v)
}
