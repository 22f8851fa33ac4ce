//go:build !cuda13000

package fakecuda_test

import "github.com/gocuda/gocuda/generated/cu"

func ctxCreate(c *cu.CUcontext) error { return cu.CtxCreate(c, 0, 0) }
