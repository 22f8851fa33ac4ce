// Command cusmoke exercises the raw bindings end to end on a real driver:
// init, driver version, device name, a stream and an event on the primary
// context, record, synchronize, destroy. It exits non-zero on any error.
//
//	go run ./cmd/cusmoke                  # the default CUDA version's bindings
//	go run -tags cuda13000 ./cmd/cusmoke  # another version's
package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"

	"github.com/gocuda/gocuda/generated/cu"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "cusmoke:", err)
		os.Exit(1)
	}
}

func check(what string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func run() error {
	// The raw layer leaves context binding to its caller: keep this
	// goroutine on one OS thread, whose current context is set below.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	fmt.Printf("bindings: CUDA %d (header CUDA_VERSION)\n", cu.HeaderVersion())
	if err := check("cuInit", cu.Init(0)); err != nil {
		return err
	}
	var drv int32
	if err := check("cuDriverGetVersion", cu.DriverGetVersion(&drv)); err != nil {
		return err
	}
	fmt.Printf("driver: CUDA %d.%d\n", drv/1000, drv%1000/10)

	var dev cu.CUdevice
	if err := check("cuDeviceGet", cu.DeviceGet(&dev, 0)); err != nil {
		return err
	}
	name := make([]byte, 256)
	if err := check("cuDeviceGetName", cu.DeviceGetName(&name[0], int32(len(name)), dev)); err != nil {
		return err
	}
	fmt.Printf("device 0: %s\n", name[:bytes.IndexByte(name, 0)])

	var ctx cu.CUcontext
	if err := check("cuDevicePrimaryCtxRetain", cu.DevicePrimaryCtxRetain(&ctx, dev)); err != nil {
		return err
	}
	defer cu.DevicePrimaryCtxRelease(dev)
	if err := check("cuCtxSetCurrent", cu.CtxSetCurrent(ctx)); err != nil {
		return err
	}

	var stream cu.CUstream
	if err := check("cuStreamCreate", cu.StreamCreate(&stream, uint32(cu.CU_STREAM_NON_BLOCKING))); err != nil {
		return err
	}
	var event cu.CUevent
	if err := check("cuEventCreate", cu.EventCreate(&event, uint32(cu.CU_EVENT_DEFAULT))); err != nil {
		return err
	}
	if err := check("cuEventRecord", cu.EventRecord(event, stream)); err != nil {
		return err
	}
	if err := check("cuStreamSynchronize", cu.StreamSynchronize(stream)); err != nil {
		return err
	}
	if err := check("cuEventSynchronize", cu.EventSynchronize(event)); err != nil {
		return err
	}
	if err := check("cuEventQuery", cu.EventQuery(event)); err != nil {
		return err
	}
	if err := check("cuEventDestroy", cu.EventDestroy(event)); err != nil {
		return err
	}
	if err := check("cuStreamDestroy", cu.StreamDestroy(stream)); err != nil {
		return err
	}
	fmt.Println("stream and event: created, recorded, synchronized, destroyed: ok")
	return nil
}
