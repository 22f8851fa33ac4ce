// Command allreduce all-reduces a float32 buffer across every GPU of the
// machine with NCCL, one goroutine per GPU, checks the result on the data
// and prints the time and bus bandwidth of each size.
//
//	allreduce [-mib 256] [-iters 20]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nccl"
	rawnccl "github.com/gocuda/gocuda/generated/nccl"
)

func main() {
	mib := flag.Int("mib", 256, "largest buffer, MiB per GPU")
	iters := flag.Int("iters", 20, "all-reduces timed per size")
	flag.Parse()
	if err := run(*mib, *iters); err != nil {
		fmt.Fprintln(os.Stderr, "allreduce:", err)
		os.Exit(1)
	}
}

func run(maxMiB, iters int) error {
	v, err := nccl.Version()
	if errors.Is(err, rawnccl.ErrNoLibrary) {
		return fmt.Errorf("NCCL is not installed (libnccl.so.2; or set %s): %w", rawnccl.LibraryEnv, err)
	}
	n, err := cuda.DeviceCount()
	if err != nil {
		return err
	}
	if n < 2 {
		return fmt.Errorf("%d GPU: an all-reduce across GPUs needs two or more", n)
	}
	fmt.Printf("NCCL %d, %d GPUs, one goroutine each\n", v, n)

	streams := make([]*cuda.Stream, n)
	for i := range streams {
		d, err := cuda.GetDevice(i)
		if err != nil {
			return err
		}
		ctx, err := cuda.PrimaryContext(d)
		if err != nil {
			return err
		}
		defer ctx.Close()
		if streams[i], err = cuda.NewStream(ctx); err != nil {
			return err
		}
		defer streams[i].Close()
	}
	comms, err := nccl.InitAll(streams)
	if err != nil {
		return err
	}
	defer func() {
		for _, c := range comms {
			c.Close()
		}
	}()

	maxElems := maxMiB << 20 / 4
	bufs := make([]*cuda.Slice[float32], n)
	for r, c := range comms {
		if bufs[r], err = cuda.AllocSlice[float32](c.Stream().Context(), maxElems); err != nil {
			return err
		}
		defer bufs[r].Close()
	}

	// Check on data first: rank r holds r+1+j%3 at element j.
	const check = 1 << 20
	for r := range comms {
		host := make([]float32, check)
		for j := range host {
			host[j] = float32(r + 1 + j%3)
		}
		part, err := bufs[r].Sub(0, check)
		if err != nil {
			return err
		}
		if err := part.CopyFrom(host); err != nil {
			return err
		}
		part.Close()
	}
	if err := each(comms, func(c *nccl.Comm) error {
		part, err := bufs[c.Rank()].Sub(0, check)
		if err != nil {
			return err
		}
		defer part.Close()
		if err := nccl.AllReduce(c, part, part, nccl.Sum); err != nil {
			return err
		}
		return c.Stream().Synchronize()
	}); err != nil {
		return err
	}
	for r := range comms {
		part, _ := bufs[r].Sub(0, check)
		host := make([]float32, check)
		err := part.CopyTo(host)
		part.Close()
		if err != nil {
			return err
		}
		for j, g := range host {
			want := float32(n*(n+1)/2 + n*(j%3))
			if g != want {
				return fmt.Errorf("rank %d: element %d is %v, want %v", r, j, g, want)
			}
		}
	}
	fmt.Printf("checked: the sum of %d ranks' %d elements is right on every rank\n", n, check)

	fmt.Printf("%12s %12s %12s %12s\n", "bytes", "time/iter", "algbw GB/s", "busbw GB/s")
	for size := 8 << 20; size <= maxMiB<<20; size *= 2 {
		elems := size / 4
		views := make([]*cuda.Slice[float32], n)
		for r := range comms {
			if views[r], err = bufs[r].Sub(0, elems); err != nil {
				return err
			}
		}
		allreduce := func(k int) error {
			return each(comms, func(c *nccl.Comm) error {
				for range k {
					if err := nccl.AllReduce(c, views[c.Rank()], views[c.Rank()], nccl.Sum); err != nil {
						return err
					}
				}
				return c.Stream().Synchronize()
			})
		}
		if err := allreduce(3); err != nil { // warm up
			return err
		}
		start := time.Now()
		if err := allreduce(iters); err != nil {
			return err
		}
		per := time.Since(start) / time.Duration(iters)
		alg := float64(size) / per.Seconds() / 1e9
		bus := alg * 2 * float64(n-1) / float64(n)
		fmt.Printf("%12d %12v %12.1f %12.1f\n", size, per.Round(time.Microsecond), alg, bus)
		for _, v := range views {
			v.Close()
		}
	}
	return nil
}

// each runs fn for every communicator, one goroutine each.
func each(comms []*nccl.Comm, fn func(c *nccl.Comm) error) error {
	errs := make([]error, len(comms))
	var wg sync.WaitGroup
	for i, c := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(c)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
