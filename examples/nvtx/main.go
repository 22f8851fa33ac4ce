// Command nvtx marks the stages of a small pipeline of goroutines with
// NVTX ranges, for Nsight Systems: a producer generates blocks of numbers,
// workers reduce them, and the main goroutine gathers the sums. It needs
// no GPU; under a profiler the ranges are bars on the timeline:
//
//	go build -o nvtxdemo ./examples/nvtx
//	nsys profile --trace=nvtx -o nvtxdemo ./nvtxdemo
//	nsys stats --report nvtx_sum nvtxdemo.nsys-rep
//
// It prints whether a profiler attached, and why not where one was named
// but could not be.
package main

import (
	"flag"
	"fmt"
	"math"
	"sync"

	"github.com/gocuda/gocuda/cuda/nvtx"
)

// The workers' ranges go to a domain of their own, as a library's would.
var pipeline = nvtx.NewDomain("pipeline")

const (
	categoryProduce = 1
	categoryReduce  = 2
)

func main() {
	blocks := flag.Int("blocks", 16, "blocks of numbers to produce")
	size := flag.Int("size", 1<<20, "numbers in a block")
	workers := flag.Int("workers", 4, "worker goroutines")
	flag.Parse()

	fmt.Println("profiler attached:", nvtx.Enabled())
	if err := nvtx.AttachFailure(); err != nil {
		fmt.Println(err)
	}
	total := run(*blocks, *size, *workers)
	fmt.Printf("sum of %d blocks: %.6g\n", *blocks, total)
}

func run(blocks, size, workers int) float64 {
	defer nvtx.RangeWith(nvtx.Attributes{Message: "run", Color: nvtx.Gray})()
	nvtx.NameCategory(categoryProduce, "produce")
	pipeline.NameCategory(categoryReduce, "reduce")
	reduce := pipeline.RegisterString("reduce block")

	work := make(chan []float64, workers)
	sums := make(chan float64, workers)
	go func() {
		defer close(work)
		for i := range blocks {
			r := nvtx.StartWith(nvtx.Attributes{
				Message:  "generate",
				Color:    nvtx.Blue,
				Category: categoryProduce,
				Payload:  nvtx.Int64(int64(i)),
			})
			b := make([]float64, size)
			for j := range b {
				b[j] = float64(i*size + j)
			}
			r.End()
			work <- b
		}
	}()

	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				end := pipeline.RangeWith(nvtx.Attributes{
					Registered: reduce,
					Color:      nvtx.Green,
					Category:   categoryReduce,
					Payload:    nvtx.Int64(int64(len(b))),
				})
				s := 0.0
				for _, v := range b {
					s += math.Sqrt(v)
				}
				end()
				sums <- s
			}
		}()
	}
	go func() {
		wg.Wait()
		close(sums)
	}()

	total := 0.0
	for s := range sums {
		total += s
		nvtx.Mark("sum received")
	}
	return total
}
