//go:build linux && (amd64 || arm64)

package cu

import (
	"strings"
	"testing"
)

// TestMissingFunctionErrorVersions: the message asks for a newer driver
// only when the driver is older than the function; a driver that reports
// a version that has the function is said to lack it.
func TestMissingFunctionErrorVersions(t *testing.T) {
	for _, c := range []struct {
		drv       int
		since     string
		want, not []string
	}{
		{11040, "11.8", []string{"cuF (symbol cuF_v2)", "(CUDA 11.4)", "needs a driver for CUDA 11.8 or later"}, nil},
		{0, "12.4", []string{"(CUDA unknown)", "needs a driver for CUDA 12.4 or later"}, nil},
		{13000, "11.8", []string{"cuF (symbol cuF_v2)", "reports CUDA 13.0", "in CUDA 11.8", "does not provide it"}, []string{"needs a driver"}},
		{12040, "12.4", []string{"reports CUDA 12.4", "does not provide it"}, []string{"needs a driver"}},
	} {
		msg := (&MissingFunctionError{Function: "cuF", Symbol: "cuF_v2", Since: c.since, DriverVersion: c.drv}).Error()
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("driver %d, function since %s: %q does not say %q", c.drv, c.since, msg, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(msg, n) {
				t.Errorf("driver %d, function since %s: %q says %q", c.drv, c.since, msg, n)
			}
		}
	}
}
