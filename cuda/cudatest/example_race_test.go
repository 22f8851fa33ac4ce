package cudatest_test

import (
	"fmt"
	"log"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
)

// produceAndConsume fills a buffer on one stream and copies it out on
// another; wait says whether the consumer waits for the producer's event.
func produceAndConsume(ctx *cuda.Context, wait bool) []uint32 {
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
	buf, err := cuda.Alloc(ctx, 4096)
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Close()
	out, err := cuda.AllocHost[uint32](ctx, 1024)
	if err != nil {
		log.Fatal(err)
	}
	defer out.Close()
	ready, err := cuda.NewEvent(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer ready.Close()

	if err := buf.MemsetD32Async(producer, 7); err != nil {
		log.Fatal(err)
	}
	if err := ready.Record(producer); err != nil {
		log.Fatal(err)
	}
	if wait {
		if err := consumer.WaitEvent(ready); err != nil {
			log.Fatal(err)
		}
	}
	if err := cuda.CopyFromDeviceAsync(consumer, out, buf); err != nil {
		log.Fatal(err)
	}
	if err := consumer.Synchronize(); err != nil {
		log.Fatal(err)
	}
	cudatest.HostRead(out.Ptr(), 4096) // the host reads what the consumer copied
	return append([]uint32(nil), out.Slice()[:2]...)
}

// With the race detector on (this package's TestMain passes
// cudatest.WithRaceDetector to UseFakeDriver), a consumer stream that
// forgets to wait for the producer's event is reported, whatever order the
// streams happened to run in; with the WaitEvent it is clean. A test
// would call cudatest.CheckRaces(t) first instead, and fail with the full
// report: both operations, their streams and where each was queued.
func Example_raceDetector() {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	ctx, err := cuda.PrimaryContext(dev)
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()

	for _, wait := range []bool{false, true} {
		produceAndConsume(ctx, wait)
		races := cudatest.TakeRaces()
		if len(races) == 0 {
			fmt.Printf("WaitEvent %v: no race\n", wait)
			continue
		}
		fmt.Printf("WaitEvent %v: %s\n", wait, races[0].Summary())
	}
	// Output:
	// WaitEvent false: CUDA data race: write by memset (cuMemsetD32Async) and read by copy DtoH (cuMemcpyDtoHAsync), unordered, on 4096 bytes of device memory
	// WaitEvent true: no race
}
