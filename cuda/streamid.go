//go:build !cuda11080

package cuda

import "github.com/gocuda/gocuda/generated/cu"

// ID returns the driver's identifier of the stream (cuStreamGetId, CUDA
// 12.0): unique among the streams of the process for its lifetime, the
// same for every handle of one queue, and the number cuda/cudatest's race
// reports give a stream ("stream 3"). It needs the bindings of CUDA 12.0
// or later: under cuda11080 it is an error matching ErrMissingFunction.
func (s *Stream) ID() (uint64, error) {
	const op = "Stream.ID"
	h := s.handle()
	st, ok := h.enter()
	if !ok {
		return 0, h.closedError(op)
	}
	defer h.exit()
	var id uint64
	err := bind(op, st.ctx.raw(), func() error {
		return check(op, "cuStreamGetId", cu.StreamGetId(st.raw, &id))
	})
	return id, err
}
