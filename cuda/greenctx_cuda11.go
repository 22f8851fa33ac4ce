//go:build cuda11080

package cuda

import (
	"fmt"

	"github.com/gocuda/gocuda/generated/cu"
)

// CUDA 11.8's bindings have no green contexts (CUDA 12.4): under cuda11080
// their functions return an error matching ErrMissingFunction. Build with
// a CUDA 12 or 13 tag to use them.

// SMResource is a set of a device's SMs, which the bindings of CUDA 11.8
// cannot make.
type SMResource struct{ dev Device }

// SMCount returns 0.
func (r SMResource) SMCount() int { return 0 }

// Device returns the device whose SMs r holds.
func (r SMResource) Device() Device { return r.dev }

func noGreen(op, fn string) error {
	return &Error{Op: op, Func: fn, Err: fmt.Errorf(
		"the bindings of CUDA 11.8 have no green contexts (CUDA 12.4): %w", cu.ErrMissingFunction)}
}

// DeviceSMs returns an error matching ErrMissingFunction.
func DeviceSMs(dev Device) (SMResource, error) {
	return SMResource{}, noGreen("DeviceSMs", "cuDeviceGetDevResource")
}

// SplitByCount returns an error matching ErrMissingFunction.
func (r SMResource) SplitByCount(groups, minCount int) ([]SMResource, SMResource, error) {
	return nil, SMResource{}, noGreen("SMResource.SplitByCount", "cuDevSmResourceSplitByCount")
}

// NewGreenContext returns an error matching ErrMissingFunction.
func NewGreenContext(r SMResource) (*Context, error) {
	return nil, noGreen("NewGreenContext", "cuGreenCtxCreate")
}

// IsGreen reports false: no green context is made under cuda11080.
func (c *Context) IsGreen() bool { return false }
