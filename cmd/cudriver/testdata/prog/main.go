// Command prog is cudriver's test program: each line of main is one kind
// of use; the tests assert what cudriver reports for each.
package main

import (
	"github.com/gocuda/gocuda/cmd/cudriver/testdata/lib"
	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
)

const freeName = "cuMemFree"

func main() {
	var p cu.CUdeviceptr
	_ = cu.MemAlloc(&p, 16)        // USE cu.MemAlloc
	_, _ = cu.Proc(freeName)       // USE cu.Proc("cuMemFree")
	_, _ = cu.Proc("cuMemcpyHtoD") // USE cu.Proc("cuMemcpyHtoD")
	set := cu.MemsetD8             // USE cu.MemsetD8
	_ = set(p, 0, 16)
	_ = cu.DriverVersionLoaded()          // not a binding
	_ = lib.Direct()                      // USE lib.Direct
	_ = lib.CallSync(lib.NewSyncer())     // USE lib.CallSync
	_ = lib.Destroy(0)                    // USE lib.Destroy
	_ = lib.Resolve()                     // USE lib.Resolve
	_ = lib.Label()                       // spells a name only
	_, _ = cuda.NewContext(cuda.Device{}) // USE cuda.NewContext
	newer()
}
