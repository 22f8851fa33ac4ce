package cuda_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
)

// The examples with an Output comment run under go test wherever the
// package's tests do: against the fake driver without a GPU (package
// cudatest), and on the device where there is one. So they print only what
// holds on every device, never a name, a count of multiprocessors or a
// time. go test cannot skip an example, so those that need what is not
// everywhere (NVRTC to compile their kernels, a toolkit's headers,
// thread-block clusters, which the fake does not model) have
// no Output comment: TestExamplesOnGPU (examples_gpu_test.go) runs them
// where they can run, on a GPU and mostly on the fake too, and checks what
// they print.

// primary returns the primary context of device 0.
func primary() *cuda.Context {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	ctx, err := cuda.PrimaryContext(dev)
	if err != nil {
		log.Fatal(err)
	}
	return ctx
}

// Two subsystems share one queue: each gets its own handle and closes it
// when done, and the queue lives until both have.
func Example_sharedStream() {
	ctx := primary()
	defer ctx.Close()
	s, err := cuda.NewStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	decoder, err := s.Clone()
	if err != nil {
		log.Fatal(err)
	}
	s.Close() // the subsystems own the queue from here on

	var buf cu.CUdeviceptr
	err = ctx.Do(func() error { return cu.MemAlloc(&buf, 4<<20) })
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Do(func() error { return cu.MemFree(buf) })

	renderer, err := decoder.Clone()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("same queue:", renderer.IsSameQueue(decoder))
	// The decoder's work runs before the renderer's: one queue, one order.
	if err := ctx.Do(func() error { return cu.MemsetD32Async(buf, 1, 1<<20, decoder.Raw()) }); err != nil {
		log.Fatal(err)
	}
	decoder.Close()
	if err := ctx.Do(func() error { return cu.MemsetD32Async(buf, 2, 1<<19, renderer.Raw()) }); err != nil {
		log.Fatal(err)
	}
	if err := renderer.Synchronize(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("renderer done")
	renderer.Close() // the last handle: the queue is destroyed
	// Output:
	// same queue: true
	// renderer done
}

// Two timing events measure work on the device.
func ExampleElapsed() {
	ctx := primary()
	defer ctx.Close()
	s, err := cuda.NewStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	start, err := cuda.NewEvent(ctx, cuda.WithTiming())
	if err != nil {
		log.Fatal(err)
	}
	defer start.Close()
	end, err := cuda.NewEvent(ctx, cuda.WithTiming())
	if err != nil {
		log.Fatal(err)
	}
	defer end.Close()

	const bytes = 256 << 20
	var buf cu.CUdeviceptr
	if err := ctx.Do(func() error { return cu.MemAlloc(&buf, bytes) }); err != nil {
		log.Fatal(err)
	}
	defer ctx.Do(func() error { return cu.MemFree(buf) })

	if err := start.Record(s); err != nil {
		log.Fatal(err)
	}
	if err := ctx.Do(func() error { return cu.MemsetD8Async(buf, 0, bytes, s.Raw()) }); err != nil {
		log.Fatal(err)
	}
	if err := end.Record(s); err != nil {
		log.Fatal(err)
	}
	if err := end.Synchronize(); err != nil {
		log.Fatal(err)
	}
	d, err := cuda.Elapsed(start, end)
	if err != nil {
		log.Fatal(err)
	}
	// The time, and the rate bytes/d.Seconds(), are the device's own (tens
	// of microseconds on an H200), so this prints only that one was taken.
	fmt.Println("memset of 256 MiB timed:", d > 0)
	// Output: memset of 256 MiB timed: true
}

// A high-priority stream for latency-sensitive work next to bulk work.
func ExampleNewStreamWithPriority() {
	ctx := primary()
	defer ctx.Close()
	least, greatest, err := ctx.StreamPriorityRange()
	if err != nil {
		log.Fatal(err)
	}
	urgent, err := cuda.NewStreamWithPriority(ctx, greatest) // the smallest number runs first
	if err != nil {
		log.Fatal(err)
	}
	defer urgent.Close()
	bulk, err := cuda.NewStreamWithPriority(ctx, least)
	if err != nil {
		log.Fatal(err)
	}
	defer bulk.Close()
	// The range is the device's (-5 to 0 on an H200).
	fmt.Println("urgent:", urgent.Priority() == greatest, "bulk:", bulk.Priority() == least)

	// Outside the range is an error naming it, before the driver (which
	// would clamp the priority silently).
	_, err = cuda.NewStreamWithPriority(ctx, greatest-1)
	fmt.Println(errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE))
	// Output:
	// urgent: true bulk: true
	// true
}

// An event orders work across streams without blocking the host: the copy
// on the second stream waits for the fill on the first.
func ExampleStream_WaitEvent() {
	ctx := primary()
	defer ctx.Close()
	producer, err := cuda.NewStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer producer.Close()
	consumer, err := cuda.NewStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer consumer.Close()
	filled, err := cuda.NewEvent(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer filled.Close()

	const words = 1 << 20
	var src, dst cu.CUdeviceptr
	var host unsafe.Pointer // page-locked, as async copies need
	err = ctx.Do(func() error {
		if err := cu.MemAlloc(&src, words*4); err != nil {
			return err
		}
		if err := cu.MemAlloc(&dst, words*4); err != nil {
			return err
		}
		return cu.MemAllocHost(&host, words*4)
	})
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Do(func() error {
		cu.MemFreeHost(host)
		cu.MemFree(dst)
		return cu.MemFree(src)
	})

	if err := ctx.Do(func() error { return cu.MemsetD32Async(src, 42, words, producer.Raw()) }); err != nil {
		log.Fatal(err)
	}
	if err := filled.Record(producer); err != nil {
		log.Fatal(err)
	}
	if err := consumer.WaitEvent(filled); err != nil {
		log.Fatal(err)
	}
	err = ctx.Do(func() error {
		if err := cu.MemcpyDtoDAsync(dst, src, words*4, consumer.Raw()); err != nil {
			return err
		}
		return cu.MemcpyDtoHAsync(host, dst, words*4, consumer.Raw())
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := consumer.Synchronize(); err != nil {
		log.Fatal(err)
	}
	out := unsafe.Slice((*uint32)(host), words)
	fmt.Println("first, last:", out[0], out[words-1])
	// Output: first, last: 42 42
}

// Wait for a stream in a select, beside a timeout, without polling; and
// run Go code once the work before it is done.
func ExampleStream_Done() {
	ctx := primary()
	defer ctx.Close()
	s, err := cuda.NewStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	m, err := cuda.Alloc(ctx, 64<<20)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	if err := m.MemsetD8Async(s, 1); err != nil {
		log.Fatal(err)
	}
	if err := s.Then(func() { fmt.Println("memset done") }); err != nil {
		log.Fatal(err)
	}
	done, err := s.Done()
	if err != nil {
		log.Fatal(err)
	}
	select {
	case <-done:
		fmt.Println("stream idle")
	case <-time.After(time.Minute):
		fmt.Println("still busy after a minute")
	}
	// Output:
	// memset done
	// stream idle
}

// Wait for a stream's work with a deadline, or until a request is
// cancelled: the wait ends with the context, and leaves nothing blocked in
// the driver (Synchronize cannot be interrupted).
func ExampleStream_WaitIdle() {
	ctx := primary()
	defer ctx.Close()
	s, err := cuda.NewStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	m, err := cuda.Alloc(ctx, 64<<20)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	if err := m.MemsetD8Async(s, 1); err != nil {
		log.Fatal(err)
	}

	deadline, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	switch err := s.WaitIdle(deadline); {
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Println("still busy after a minute") // the work goes on: wait again, or give up on it
	case err != nil:
		log.Fatal(err) // the work failed
	default:
		fmt.Println("idle")
	}

	// An idle stream is not waited for, even with the context done.
	cancel()
	fmt.Println(s.WaitIdle(deadline))
	// Output:
	// idle
	// <nil>
}
