//go:build linux && (amd64 || arm64)

package fft

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cufft"
)

func TestEveryKindHasItsCuFFTType(t *testing.T) {
	for k := C2C; k.valid(); k++ {
		if got := rawKinds[k].String(); got != "CUFFT_"+k.String() {
			t.Errorf("%v is %v", k, got)
		}
	}
	if int32(Forward) != cufft.CUFFT_FORWARD || int32(Inverse) != cufft.CUFFT_INVERSE {
		t.Fatal("directions differ from cuFFT's")
	}
}

// TestExecChecksSizesBeforeCuFFT runs Exec on plans with no cuFFT plan
// behind them, on memory of the real or the fake driver: every check
// must come before the library, and what passes them fails with
// ErrClosed.
func TestExecChecksSizesBeforeCuFFT(t *testing.T) {
	devs, err := cuda.Devices()
	if err != nil || len(devs) == 0 {
		t.Skipf("no driver or device: %v", err)
	}
	ctx, err := cuda.PrimaryContext(devs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	mem := func(bytes int) *cuda.DeviceMemory {
		m, err := cuda.Alloc(ctx, bytes)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return m
	}
	plan := func(kind Kind, batch int, dims ...int) *Plan {
		s, err := newShape("test", kind, dims, batch)
		if err != nil {
			t.Fatal(err)
		}
		return &Plan{sh: &shared{shape: s}}
	}
	c2c := plan(C2C, 2, 100)   // 1600 bytes in and out
	r2c := plan(R2C, 1, 6, 10) // 240 bytes in, 6×6 complex64 = 288 out
	c2r := plan(C2R, 1, 6, 10)
	z2d := plan(Z2D, 3, 9) // 3×5 complex128 = 240 in, 216 out
	m1600, m1599 := mem(1600), mem(1599)
	m240, m288, m287 := mem(240), mem(288), mem(287)
	m216, m215 := mem(216), mem(215)
	closed := mem(1600)
	closed.Close()
	for name, tc := range map[string]struct {
		err  error
		want string
	}{
		"C2C small input":     {c2c.Exec(m1599, m1600, Forward), "C2C 100 (batch 2): the input is 200 complex64 (1600 bytes), but its memory has 1599 bytes"},
		"C2C small output":    {c2c.Exec(m1600, m1599, Inverse), "the output is 200 complex64 (1600 bytes), but its memory has 1599 bytes"},
		"C2C in place small":  {c2c.Exec(m1599, m1599, Forward), "C2C 100 (batch 2) in place: the input and output need 1600 bytes, but the memory has 1599"},
		"no direction":        {c2c.Exec(m1600, m1600, 0), "unknown direction Direction(0): want Forward or Inverse"},
		"R2C inverse":         {r2c.Exec(m240, m288, Inverse), "R2C transforms are Forward only"},
		"C2R forward":         {c2r.Exec(m288, m240, Forward), "C2R transforms are Inverse only"},
		"R2C small output":    {r2c.Exec(m240, m287, Forward), "R2C 6×10: the output is 36 complex64 (288 bytes), but its memory has 287 bytes"},
		"R2C output too":      {r2c.Exec(m240, m240, Forward), "in place: the complex side, with the real side's rows padded in it, need 288 bytes, but the memory has 240"},
		"C2R small output":    {c2r.Exec(m288, m216, Inverse), "C2R 6×10: the output is 60 float32 (240 bytes), but its memory has 216 bytes"},
		"Z2D small input":     {z2d.Exec(m215, m216, Inverse), "Z2D 9 (batch 3): the input is 15 complex128 (240 bytes), but its memory has 215 bytes"},
		"Z2D small output":    {z2d.Exec(m240, m215, Inverse), "the output is 27 float64 (216 bytes), but its memory has 215 bytes"},
		"R2C in place padded": {r2c.Exec(m287, m287, Forward), "need 288 bytes, but the memory has 287"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", name, tc.err, tc.want)
		}
		if errors.Is(tc.err, cuda.ErrClosed) {
			t.Errorf("%s: %v matches ErrClosed", name, tc.err)
		}
	}
	for name, err := range map[string]error{
		"C2C":              c2c.Exec(m1600, m1600, Forward),
		"C2C larger":       c2c.Exec(m1600, m1600, Inverse),
		"R2C":              r2c.Exec(m240, m288, Forward),
		"R2C in place":     r2c.Exec(m288, m288, Forward),
		"C2R":              c2r.Exec(m288, m240, Inverse),
		"Z2D":              z2d.Exec(m240, m216, Inverse),
		"closed input":     c2c.Exec(closed, m1600, Forward),
		"closed output":    c2c.Exec(m1600, closed, Forward),
		"nil input":        c2c.Exec(nil, m1600, Forward),
		"nil plan":         (*Plan)(nil).Exec(m1600, m1600, Forward),
		"closed in, place": c2c.Exec(closed, closed, Forward),
	} {
		if !errors.Is(err, cuda.ErrClosed) {
			t.Errorf("%s: %v, want ErrClosed", name, err)
		}
	}
}
