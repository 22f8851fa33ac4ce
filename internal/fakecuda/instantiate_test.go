//go:build !cuda11080

package fakecuda_test

import "github.com/gocuda/gocuda/generated/cu"

func instantiate(x *cu.CUgraphExec, g cu.CUgraph) error { return cu.GraphInstantiate(x, g, 0) }
