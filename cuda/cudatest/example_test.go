package cudatest_test

import (
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
)

// TestMain chooses the fake driver before anything calls the driver: the
// examples below run against it, in CI too.
func TestMain(m *testing.M) {
	os.Exit(cudatest.UseFakeDriver(m, cudatest.WithRaceDetector()))
}

// Code under test runs against the fake driver as against a GPU, and a
// test can make any driver call fail to check how the code copes.
func Example() {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	name, err := dev.Name()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("device:", name)
	ctx, err := cuda.PrimaryContext(dev)
	if err != nil {
		log.Fatal(err)
	}

	// The next cuStreamCreate fails as on a device out of memory.
	cudatest.FailCall("cuStreamCreate", 1, cu.CUDA_ERROR_OUT_OF_MEMORY)
	_, err = cuda.NewStream(ctx)
	fmt.Println(err)

	s, err := cuda.NewStream(ctx) // only that one call failed
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("live streams:", cudatest.Live().Streams)
	s.Close()
	ctx.Close()
	fmt.Println(cudatest.Live())
	// Output:
	// device: gocuda fake device (host memory)
	// cuda: NewStream: cuStreamCreate: CUDA_ERROR_OUT_OF_MEMORY (2)
	// live streams: 1
	// contexts 0, primary retains 0, streams 0, events 0, device allocations 0, host allocations 0, graphs 0, graph execs 0, modules 0, reaped 0, threads with a context bound 0
}

// WaitNoLeaks names what a piece of code left behind; CheckNoLeaks does the
// same as a test's last cleanup.
func ExampleWaitNoLeaks() {
	before := cudatest.Live()
	dev, _ := cuda.GetDevice(0)
	ctx, err := cuda.PrimaryContext(dev)
	if err != nil {
		log.Fatal(err)
	}
	s, err := cuda.NewStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	// Forgot s.Close(); s stays reachable, so no cleanup releases it.
	ctx.Close()
	fmt.Println("left:", cudatest.WaitNoLeaks(before))
	s.Close()
	fmt.Printf("after Close: %q\n", cudatest.WaitNoLeaks(before))
	// Output:
	// left: primary retains 1 (was 0), streams 1 (was 0)
	// after Close: ""
}
