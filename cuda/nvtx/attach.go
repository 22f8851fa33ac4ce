package nvtx

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// InjectionEnv names the environment variable through which a tool
// (Nsight Systems, Nsight Compute, …) asks to be loaded: the path of its
// 64-bit injection library. It is read once, on the first call of the
// package that needs to know whether a tool is attached.
const InjectionEnv = "NVTX_INJECTION64_PATH"

const (
	stateFresh uint32 = iota
	stateOff
	stateOn
)

var (
	state      atomic.Uint32
	attachOnce sync.Once
	attachErr  error
)

// off reports whether the package is known to be disabled: no tool
// attached, the attempt made. It is one atomic load and a compare,
// inlined into every entry point, which returns at once when it holds:
// the whole cost of an event when no tool is attached. The entry points
// leave the first call's attempt to the function they call otherwise,
// which starts with on.
func off() bool {
	return state.Load() == stateOff
}

// on reports whether a tool is attached, attaching it on the first call.
func on() bool {
	s := state.Load()
	if s == stateFresh {
		return attach()
	}
	return s == stateOn
}

// attach loads the tool named by InjectionEnv, once per process, as the
// NVTX implementation in a C program does on its first NVTX call.
func attach() bool {
	attachOnce.Do(func() {
		s := stateOff
		if path := os.Getenv(InjectionEnv); path != "" {
			if err := load(path); err != nil {
				attachErr = err
			} else {
				s = stateOn
			}
		}
		state.Store(s)
	})
	return state.Load() == stateOn
}

// Enabled reports whether a tool is attached, so that events reach it.
// The first call of Enabled, or of any function that records an event,
// loads the tool named by NVTX_INJECTION64_PATH if there is one; a
// program can call Enabled at start to take that cost out of its first
// measured range.
func Enabled() bool {
	return on()
}

// AttachFailure returns why the tool named by NVTX_INJECTION64_PATH did
// not attach, an *AttachError, or nil where it did or where none was
// named. A tool that cannot be attached leaves the package disabled,
// never failing the program: this is only for finding out why a profile
// shows no ranges.
func AttachFailure() error {
	on()
	return attachErr
}

// AttachError says why the tool at Path did not attach.
type AttachError struct {
	Path string
	// Stage is what failed: "loading the library" (dlopen),
	// "finding InitializeInjectionNvtx2" (the library is not an NVTX
	// tool) or "initializing the tool" (its entry point returned 0).
	Stage string
	// Detail is the dynamic loader's message, or the tool's result.
	Detail string
}

func (e *AttachError) Error() string {
	msg := fmt.Sprintf("nvtx: tool %s (%s): %s failed", e.Path, InjectionEnv, e.Stage)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}
