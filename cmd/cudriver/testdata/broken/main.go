// Command broken does not type-check: cudriver refuses it.
package main

import "github.com/gocuda/gocuda/generated/cu"

func main() { _ = cu.MemAlloc(1) }
