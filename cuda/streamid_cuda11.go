//go:build cuda11080

package cuda

import (
	"fmt"

	"github.com/gocuda/gocuda/generated/cu"
)

// ID returns the driver's identifier of the stream (cuStreamGetId), which
// CUDA 11.8's bindings do not have: under cuda11080 it is an error
// matching ErrMissingFunction. Build with a CUDA 12 or 13 tag to use it.
func (s *Stream) ID() (uint64, error) {
	const op = "Stream.ID"
	if _, ok := s.handle().peek(); !ok {
		return 0, s.handle().closedError(op)
	}
	return 0, &Error{Op: op, Func: "cuStreamGetId", Err: fmt.Errorf(
		"the bindings of CUDA 11.8 have no cuStreamGetId (CUDA 12.0): %w", cu.ErrMissingFunction)}
}
