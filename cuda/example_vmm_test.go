package cuda_test

import (
	"fmt"
	"log"

	"github.com/gocuda/gocuda/cuda"
)

// A buffer that grows in place: appending maps more physical memory after
// what is there, so the base address never changes and nothing is copied.
// A Slice of its current length works wherever a Slice does.
func ExampleGrowableSlice() {
	ctx := primary()
	defer ctx.Close()
	g, err := cuda.NewGrowableSlice[float32](ctx, 1<<28) // reserves addresses only
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	base := g.Ptr()
	row := make([]float32, 1<<18)
	for i := range 10 {
		for j := range row {
			row[j] = float32(i)
		}
		if err := g.Append(row); err != nil {
			log.Fatal(err)
		}
	}
	s, err := g.Slice()
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	last := make([]float32, 1)
	tail, err := s.Sub(s.Len()-1, s.Len())
	if err != nil {
		log.Fatal(err)
	}
	defer tail.Close()
	if err := tail.CopyTo(last); err != nil {
		log.Fatal(err)
	}
	fmt.Println("length:", s.Len())
	fmt.Println("same base:", g.Ptr() == base)
	fmt.Println("last element:", last[0])
	// Output:
	// length: 2621440
	// same base: true
	// last element: 9
}
