package main

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
)

// runGoCopy compares the stream-ordered copies of Go slices
// (Slice.CopyFromHost, CopyToHost) with what a program writes without
// them: a page-locked buffer of its own, kept from copy to copy, the Go
// slice copied into it and an asynchronous copy from it (or back), and
// with the driver's own copy of pageable memory on the stream. Rounds of
// the three alternate, so that the machine's drift hits all alike; each
// copy is waited for (Stream.Synchronize), so the figures are of copies
// done.
func runGoCopy() {
	ctx, s, ev := newCudaSetup()
	defer ctx.Close()
	defer s.Close()
	defer ev.Close()
	for _, size := range []int{4 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20} {
		n := size / 4
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(i)
		}
		dst := make([]float32, n)
		x, err := cuda.AllocSlice[float32](s, n)
		must("cuda.AllocSlice", err)
		pinned, err := cuda.AllocHost[float32](ctx, n)
		must("cuda.AllocHost", err)
		raw := s.Raw()
		dptr := x.Ptr()
		sync := func() error { return s.Synchronize() }
		ways := []struct {
			name string
			htod func() error
			dtoh func() error
		}{
			{"staging_loop", func() error {
				copy(pinned.Slice(), src)
				if err := x.CopyFromAsync(s, pinned); err != nil {
					return err
				}
				return sync()
			}, func() error {
				if err := x.CopyToAsync(s, pinned); err != nil {
					return err
				}
				if err := sync(); err != nil {
					return err
				}
				copy(dst, pinned.Slice())
				return nil
			}},
			{"go_slice", func() error {
				if err := x.CopyFromHost(s, src); err != nil {
					return err
				}
				return sync()
			}, func() error { return x.CopyToHost(s, dst) }},
			{"driver_pageable", func() error {
				return ctx.Do(func() error {
					if err := cu.MemcpyHtoDAsync(dptr, unsafe.Pointer(&src[0]), uint64(size), raw); err != nil {
						return err
					}
					return cu.StreamSynchronize(raw)
				})
			}, func() error {
				return ctx.Do(func() error {
					if err := cu.MemcpyDtoHAsync(unsafe.Pointer(&dst[0]), dptr, uint64(size), raw); err != nil {
						return err
					}
					return cu.StreamSynchronize(raw)
				})
			}},
		}
		reps := max(1, (16<<20)/size) // about 16 MiB per round and way
		const rounds = 21
		for _, dir := range []string{"htod", "dtoh"} {
			times := make([][]float64, len(ways))
			for r := 0; r < rounds+1; r++ {
				for w, way := range ways {
					f := way.htod
					if dir == "dtoh" {
						f = way.dtoh
					}
					t := time.Now()
					for i := 0; i < reps; i++ {
						must(way.name, f())
					}
					if r > 0 { // the first round warms the buffers up
						times[w] = append(times[w], float64(time.Since(t).Nanoseconds())/float64(reps))
					}
				}
			}
			base := median(times[0])
			for w, way := range ways {
				m := median(times[w])
				fmt.Printf("GOCOPY dir=%s size=%d way=%s median_us=%.2f gbps=%.2f ratio_to_staging_loop=%.3f\n",
					dir, size, way.name, m/1e3, float64(size)/m, base/m)
			}
		}
		got := make([]float32, n)
		must("CopyTo", x.CopyTo(got))
		for i := range got {
			if got[i] != src[i] {
				must("check", fmt.Errorf("element %d is %v, want %v", i, got[i], src[i]))
			}
		}
		must("Close", pinned.Close())
		must("Close", x.Close())
	}
}
