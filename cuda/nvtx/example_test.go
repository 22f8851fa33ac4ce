package nvtx_test

import (
	"fmt"
	"runtime"

	"github.com/gocuda/gocuda/cuda/nvtx"
)

var codec = nvtx.NewDomain("codec")

func decode(frame []byte) int {
	defer codec.RangeWith(nvtx.Attributes{
		Registered: codec.RegisterString("decode"),
		Color:      nvtx.Green,
		Payload:    nvtx.Int64(int64(len(frame))),
	})()
	return len(frame) / 2
}

// A program marks its phases with ranges; under nsys profile they are
// bars on the timeline, and without a profiler they cost nothing.
func Example() {
	defer nvtx.Range("main")()

	nvtx.NameCategory(1, "io")
	read := nvtx.StartWith(nvtx.Attributes{Message: "read", Category: 1, Color: nvtx.Blue})
	frames := [][]byte{make([]byte, 64), make([]byte, 128)}
	read.End()

	total := 0
	for _, f := range frames {
		total += decode(f)
	}
	nvtx.Mark("decoded")
	fmt.Println("decoded", total, "bytes; profiler attached:", nvtx.Enabled())
	// Output: decoded 96 bytes; profiler attached: false
}

// Push and Pop nest on the OS thread: lock the goroutine to its thread
// around them.
func ExamplePush() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	nvtx.Push("outer")
	nvtx.Push("inner")
	nvtx.Pop()
	depth := nvtx.Pop()
	fmt.Println(depth == nvtx.NotTracked || depth == 0)
	// Output: true
}

// Why a profile shows no ranges: the tool the profiler named could not be
// attached.
func ExampleAttachFailure() {
	if err := nvtx.AttachFailure(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("attached:", nvtx.Enabled())
	// Output: attached: false
}
