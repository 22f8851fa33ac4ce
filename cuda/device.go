package cuda

import (
	"fmt"
	"sync"

	"github.com/gocuda/gocuda/generated/cu"
)

// initDriver calls cuInit once; its error is remembered because the driver
// library's absence does not change while the process runs.
var initDriver = sync.OnceValue(func() error {
	return check("Init", "cuInit", cu.Init(0))
})

// Device is a CUDA device. It is a plain value: devices are not reference
// counted by the driver.
type Device struct {
	raw     cu.CUdevice
	ordinal int
}

// DeviceCount initializes the driver and returns the number of devices.
func DeviceCount() (int, error) {
	if err := initDriver(); err != nil {
		return 0, err
	}
	var n int32
	if err := cu.DeviceGetCount(&n); err != nil {
		return 0, newError("DeviceCount", "cuDeviceGetCount", err)
	}
	return int(n), nil
}

// GetDevice initializes the driver and returns the device of the ordinal.
func GetDevice(ordinal int) (Device, error) {
	if err := initDriver(); err != nil {
		return Device{}, err
	}
	var d cu.CUdevice
	if err := cu.DeviceGet(&d, int32(ordinal)); err != nil {
		return Device{}, newError("GetDevice", "cuDeviceGet", err)
	}
	return Device{raw: d, ordinal: ordinal}, nil
}

// Devices initializes the driver and returns every device, by ordinal.
func Devices() ([]Device, error) {
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	ds := make([]Device, n)
	for i := range ds {
		if ds[i], err = GetDevice(i); err != nil {
			return nil, err
		}
	}
	return ds, nil
}

// Raw returns the driver's device handle.
func (d Device) Raw() cu.CUdevice { return d.raw }

// Ordinal returns the device's index as cuDeviceGet numbers it.
func (d Device) Ordinal() int { return d.ordinal }

// Name returns the device's product name.
func (d Device) Name() (string, error) {
	var buf [256]byte
	if err := cu.DeviceGetName(&buf[0], int32(len(buf)), d.raw); err != nil {
		return "", newError("Device.Name", "cuDeviceGetName", err)
	}
	for i, c := range buf {
		if c == 0 {
			return string(buf[:i]), nil
		}
	}
	return string(buf[:]), nil
}

func (d Device) String() string { return fmt.Sprintf("cuda device %d", d.ordinal) }
