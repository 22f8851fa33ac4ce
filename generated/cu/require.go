//go:build linux && (amd64 || arm64)

package cu

import (
	"errors"
	"fmt"
	"strings"
)

// ErrDriverTooOld is matched (errors.Is) by a *DriverTooOldError.
var ErrDriverTooOld = errors.New("CUDA driver too old")

// DriverTooOldError reports that the installed driver is older than the
// version a program asked for with RequireDriver.
type DriverTooOldError struct {
	Installed int // what the driver reports (cuDriverGetVersion), e.g. 12020; 0 if it reports nothing
	Required  int // the version asked for, e.g. 12040
}

func (e *DriverTooOldError) Error() string {
	if e.Installed <= 0 {
		return fmt.Sprintf("cu: the installed CUDA driver does not report its version; this program needs a driver for CUDA %s or later",
			versionString(e.Required))
	}
	return fmt.Sprintf("cu: the installed CUDA driver supports CUDA %s; this program needs a driver for CUDA %s or later",
		versionString(e.Installed), versionString(e.Required))
}

// Is makes errors.Is(err, ErrDriverTooOld) true.
func (e *DriverTooOldError) Is(target error) bool { return target == ErrDriverTooOld }

// RequireDriver loads the driver and checks that it supports CUDA version
// (1000*major + 10*minor, as CUDA_VERSION: 12040 for 12.4), so that a
// program can refuse an old driver at startup with one error rather than
// meet a *MissingFunctionError in the middle of its work. It returns nil
// when the driver is recent enough, a *DriverTooOldError (matching
// ErrDriverTooOld) naming both versions when it is not, and the
// *LoadError (matching ErrNoDriver) when there is no driver. The version a
// program needs is the largest Since of the functions it calls (MinDriver),
// which the command cmd/cudriver finds in its source.
func RequireDriver(version int) error {
	if version < 1000 {
		return fmt.Errorf("cu: RequireDriver(%d): a CUDA version is 1000*major + 10*minor, such as 12040 for 12.4", version)
	}
	if err := Load(); err != nil {
		return err
	}
	if driverVer < version {
		return &DriverTooOldError{Installed: driverVer, Required: version}
	}
	return nil
}

// Since returns the CUDA version that introduced the driver symbol these
// bindings call for the C function name, as the header spells it
// ("cuMemAlloc"), e.g. 12040. The versions are those of the matrix the
// bindings were generated from, so the oldest one (11080) stands for that
// version or earlier, and a function first declared by the 12.4 header may
// be older than 12.4: the answer is never below what the function needs.
// ok is false when the name is not a function of these bindings.
func Since(name string) (version int, ok bool) {
	for i := range procTable {
		if procTable[i].api == name {
			return parseSince(procTable[i].since), true
		}
	}
	return 0, false
}

// MinDriver returns the CUDA version a driver needs to provide every one of
// the C functions names ("cuMemAlloc", ...): the largest of their Since, to
// pass to RequireDriver. Names these bindings do not have are an error
// naming them.
func MinDriver(names ...string) (version int, err error) {
	var unknown []string
	for _, n := range names {
		v, ok := Since(n)
		if !ok {
			unknown = append(unknown, n)
			continue
		}
		version = max(version, v)
	}
	if len(unknown) > 0 {
		return 0, fmt.Errorf("cu: not functions of the CUDA %s bindings: %s", versionString(headerVersion), strings.Join(unknown, ", "))
	}
	return version, nil
}

// parseSince turns the "12.4" of a procInfo into 12040.
func parseSince(s string) int {
	var major, minor int
	if _, err := fmt.Sscanf(s, "%d.%d", &major, &minor); err != nil {
		panic("cu: malformed version in the function table: " + s)
	}
	return major*1000 + minor*10
}
