package cuda_test

import (
	"fmt"
	"log"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/internal/testkernels"
)

// Typed device memory: lengths and sub-ranges in elements, passed to a
// kernel as the address of their first element. The vector add runs on
// the second half of the arrays only, with no byte offset in sight.
func ExampleSlice() {
	ctx := primary()
	defer ctx.Close()
	s, err := cuda.NewStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	mod, err := cuda.LoadModule(ctx, []byte(testkernels.VectorAdd))
	if err != nil {
		log.Fatal(err)
	}
	defer mod.Close()
	vadd, err := mod.Function(testkernels.VectorAddName)
	if err != nil {
		log.Fatal(err)
	}

	const n = 1000
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i)
	}
	a, err := cuda.AllocSliceFrom(ctx, x)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	b, err := cuda.AllocSlice[float32](ctx, n)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	if err := b.Fill(1); err != nil { // cuMemsetD32 with 1.0's bits
		log.Fatal(err)
	}
	c, err := cuda.AllocSlice[float32](ctx, n)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if err := c.Fill(0); err != nil {
		log.Fatal(err)
	}

	// Views of elements n/2 to n-1; each keeps its allocation alive.
	half := func(v *cuda.Slice[float32]) *cuda.Slice[float32] {
		h, err := v.Sub(n/2, n)
		if err != nil {
			log.Fatal(err)
		}
		return h
	}
	a2, b2, c2 := half(a), half(b), half(c)
	defer a2.Close()
	defer b2.Close()
	defer c2.Close()

	m := c2.Len()
	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: cuda.Blocks(m, 256)}, Block: cuda.Dim3{X: 256}}
	if err := vadd.Launch(s, cfg, a2, b2, c2, uint32(m)); err != nil {
		log.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		log.Fatal(err)
	}
	out := make([]float32, n)
	if err := c.CopyTo(out); err != nil {
		log.Fatal(err)
	}
	fmt.Println(out[0], out[n/2], out[n-1])
	// Output: 0 501 1000
}
