//go:build linux && (amd64 || arm64)

package dnn_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/dnn"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
)

// positions counts the places a window of taps taps spaced dil apart
// fits in a row of in elements padded by pad on each side, the window
// moving by stride from the row's start: an output dimension of a
// convolution, by enumeration rather than by its formula.
func positions(in, pad, stride, dil, taps int) int {
	n := 0
	for start := -pad; start+(taps-1)*dil <= in-1+pad; start += stride {
		n++
	}
	return n
}

func TestConvOutputCountsWindowPositions(t *testing.T) {
	for _, tc := range []struct {
		c           dnn.Conv
		n, ch, h, w int
		k, r, s     int
	}{
		{dnn.Conv{}, 1, 3, 7, 9, 4, 3, 3},
		{dnn.Conv{PadH: 1, PadW: 1}, 2, 3, 7, 9, 4, 3, 3},
		{dnn.Conv{StrideH: 2, StrideW: 3}, 1, 4, 8, 11, 6, 3, 3},
		{dnn.Conv{PadH: 2, PadW: 1, DilationH: 2, DilationW: 3, StrideH: 1, StrideW: 2}, 2, 4, 9, 13, 4, 3, 2},
		{dnn.Conv{PadH: 1, PadW: 1, Groups: 4}, 2, 8, 6, 6, 8, 3, 3},
		{dnn.Conv{PadH: 2, PadW: 2, StrideH: 2, StrideW: 2}, 1, 3, 11, 10, 5, 5, 5},
		{dnn.Conv{}, 3, 16, 4, 4, 8, 1, 1},
	} {
		groups := max(tc.c.Groups, 1)
		x := dnn.NewTensor[float32](nil, dnn.NCHW, tc.n, tc.ch, tc.h, tc.w)
		w := dnn.NewFilter[float32](nil, dnn.NCHW, tc.k, tc.ch/groups, tc.r, tc.s)
		n, k, p, q, err := dnn.ConvOutput(tc.c, x, w)
		if err != nil {
			t.Errorf("%+v: %v", tc, err)
			continue
		}
		one := func(v int) int { return max(v, 1) }
		wp := positions(tc.h, tc.c.PadH, one(tc.c.StrideH), one(tc.c.DilationH), tc.r)
		wq := positions(tc.w, tc.c.PadW, one(tc.c.StrideW), one(tc.c.DilationW), tc.s)
		if n != tc.n || k != tc.k || p != wp || q != wq {
			t.Errorf("%+v: ConvOutput = %d×%d×%d×%d, want %d×%d×%d×%d", tc, n, k, p, q, tc.n, tc.k, wp, wq)
		}
	}
}

// checkRefused checks that err is a refusal of the arguments naming want,
// made before the handle (nil in these tests) was looked at.
func checkRefused(t *testing.T, name string, err error, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: no error, want one saying %q", name, want)
	case errors.Is(err, cuda.ErrClosed):
		t.Errorf("%s: %v: the handle was reached before the arguments were checked", name, err)
	case !strings.Contains(err.Error(), want):
		t.Errorf("%s: %v, want an error saying %q", name, err, want)
	}
}

func TestConvForwardRefusesBadArgumentsBeforeCuDNN(t *testing.T) {
	ctx := libtest.Context(t)
	alloc := func(n int) *cuda.Slice[float32] { return allocIn[float32](t, ctx, n) }
	// A valid convolution: x 2×4×8×8, w 6×4×3×3, pad 1, y 2×6×8×8.
	xd, wd, yd := alloc(2*4*8*8), alloc(6*4*3*3), alloc(2*6*8*8)
	conv := dnn.Conv{PadH: 1, PadW: 1}
	x := dnn.NewTensor(xd, dnn.NCHW, 2, 4, 8, 8)
	w := dnn.NewFilter(wd, dnn.NCHW, 6, 4, 3, 3)
	y := dnn.NewTensor(yd, dnn.NCHW, 2, 6, 8, 8)
	big := alloc(4 * 4 * 8 * 8)
	overlapping, err := big.Sub(100, 100+2*6*8*8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { overlapping.Close() })
	closed := alloc(2 * 6 * 8 * 8)
	closed.Close()

	var h *dnn.Handle
	type args struct {
		c    dnn.Conv
		x    dnn.Tensor[float32]
		w    dnn.Filter[float32]
		y    dnn.Tensor[float32]
		want string
	}
	with := func(f func(a *args)) args {
		a := args{conv, x, w, y, ""}
		f(&a)
		return a
	}
	for name, a := range map[string]args{
		"zero N":             with(func(a *args) { a.x.N, a.want = 0, "dimension N must be positive" }),
		"negative W":         with(func(a *args) { a.x.W, a.want = -8, "dimension W must be positive" }),
		"zero filter R":      with(func(a *args) { a.w.R, a.want = 0, "dimension R must be positive" }),
		"unknown layout":     with(func(a *args) { a.x.Layout, a.want = dnn.Layout(7), "unknown layout" }),
		"over 2^31 elements": with(func(a *args) { a.x.N, a.x.C, a.x.H, a.x.W, a.want = 1<<10, 1<<10, 1<<10, 2, "cuDNN's limit" }),
		"channels":           with(func(a *args) { a.w.C, a.want = 3, "x has 4 channels but w has 3 per group" }),
		"groups of channels": with(func(a *args) { a.c.Groups, a.want = 2, "x has 4 channels but w has 4 per group in 2 group(s)" }),
		"groups of filters":  with(func(a *args) { a.c.Groups, a.w.C, a.w.K, a.want = 4, 1, 6, "6 filters do not split into 4 groups" }),
		"negative padding":   with(func(a *args) { a.c.PadW, a.want = -1, "negative padding" }),
		"negative stride":    with(func(a *args) { a.c.StrideH, a.want = -2, "negative stride" }),
		"negative dilation":  with(func(a *args) { a.c.DilationW, a.want = -1, "negative dilation" }),
		"negative groups":    with(func(a *args) { a.c.Groups, a.want = -1, "negative group count" }),
		"filter too large":   with(func(a *args) { a.c, a.w.R, a.want = dnn.Conv{}, 9, "larger than the padded input" }),
		"dilated filter":     with(func(a *args) { a.c.DilationH, a.want = 5, "larger than the padded input" }),
		"y shape":            with(func(a *args) { a.y.H, a.want = 7, "y is 2×6×7×8 but the convolution's output is 2×6×8×8" }),
		"y layout":           with(func(a *args) { a.y.Layout, a.want = dnn.NHWC, "x is NCHW but y is NHWC" }),
		"w layout":           with(func(a *args) { a.w.Layout, a.want = dnn.NHWC, "x is NCHW but w is NHWC" }),
		"x too short":        with(func(a *args) { a.x.Data, a.want = alloc(2*4*8*8-1), "x needs 512 elements but its Slice has 511" }),
		"nil w data":         with(func(a *args) { a.w.Data, a.want = nil, "w has no data" }),
		"y overlaps x":       with(func(a *args) { a.x.Data, a.y.Data, a.want = big, overlapping, "y shares memory with x or w" }),
	} {
		checkRefused(t, name, dnn.ConvForward(h, a.c, a.x, a.w, a.y), a.want)
	}
	// A closed Slice is a closed handle, named as the argument it is.
	if err := dnn.ConvForward(h, conv, x, w, dnn.NewTensor(closed, dnn.NCHW, 2, 6, 8, 8)); !errors.Is(err, cuda.ErrClosed) || !strings.Contains(err.Error(), "the Slice of y") {
		t.Errorf("closed y: %v, want an error matching cuda.ErrClosed that names y", err)
	}
	// The same arguments, valid, pass the checks and reach the handle.
	if err := dnn.ConvForward(h, conv, x, w, y); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("valid arguments on a nil handle: %v, want an error matching cuda.ErrClosed", err)
	}
}

func TestSoftmaxRefusesBadArgumentsBeforeCuDNN(t *testing.T) {
	ctx := libtest.Context(t)
	alloc := func(n int) *cuda.Slice[cuda.Float16] { return allocIn[cuda.Float16](t, ctx, n) }
	x := dnn.NewTensor(alloc(4*10), dnn.NCHW, 4, 10, 1, 1)
	y := dnn.NewTensor(alloc(4*10), dnn.NCHW, 4, 10, 1, 1)
	big := alloc(100)
	half, err := big.Sub(20, 60)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { half.Close() })
	var h *dnn.Handle
	for _, tc := range []struct {
		name string
		algo dnn.SoftmaxAlgo
		over dnn.SoftmaxOver
		x, y dnn.Tensor[cuda.Float16]
		want string
	}{
		{"unknown algorithm", 9, dnn.Channels, x, y, "unknown algorithm"},
		{"unknown set", dnn.Accurate, 9, x, y, "unknown softmax set"},
		{"shapes differ", dnn.Accurate, dnn.Channels, x, dnn.NewTensor(y.Data, dnn.NCHW, 2, 20, 1, 1), "x is 4×10×1×1 NCHW but y is 2×20×1×1 NCHW"},
		{"layouts differ", dnn.Log, dnn.Channels, x, dnn.NewTensor(y.Data, dnn.NHWC, 4, 10, 1, 1), "they must match"},
		{"y too short", dnn.Log, dnn.Image, x, dnn.NewTensor(alloc(39), dnn.NCHW, 4, 10, 1, 1), "y needs 40 elements but its Slice has 39"},
		{"zero C", dnn.Log, dnn.Image, dnn.NewTensor(x.Data, dnn.NCHW, 4, 0, 1, 1), y, "dimension C must be positive"},
		{"overlap", dnn.Accurate, dnn.Image, dnn.NewTensor(big, dnn.NCHW, 4, 10, 1, 1), dnn.NewTensor(half, dnn.NCHW, 4, 10, 1, 1), "y shares memory with x"},
		{"same memory", dnn.Accurate, dnn.Image, x, x, "y shares memory with x"},
	} {
		checkRefused(t, tc.name, dnn.Softmax(h, tc.algo, tc.over, tc.x, tc.y), tc.want)
	}
	if err := dnn.Softmax(h, dnn.Accurate, dnn.Channels, x, y); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("valid arguments on a nil handle: %v, want an error matching cuda.ErrClosed", err)
	}
}

func TestHandleSettingsRefuseBadValuesAndNilHandles(t *testing.T) {
	var h *dnn.Handle
	if err := h.SetSearch(dnn.Search(5)); err == nil || !strings.Contains(err.Error(), "unknown search") {
		t.Errorf("SetSearch(5): %v, want an unknown search", err)
	}
	if err := h.SetWorkspaceLimit(-1); err == nil || !strings.Contains(err.Error(), "-1 bytes") {
		t.Errorf("SetWorkspaceLimit(-1): %v, want a refusal of -1 bytes", err)
	}
	for name, err := range map[string]error{
		"SetSearch":         h.SetSearch(dnn.Exhaustive),
		"SetWorkspaceLimit": h.SetWorkspaceLimit(1 << 20),
		"SetTF32":           h.SetTF32(true),
		"Close":             h.Close(),
	} {
		if !errors.Is(err, cuda.ErrClosed) {
			t.Errorf("%s on a nil handle: %v, want an error matching cuda.ErrClosed", name, err)
		}
	}
	if _, err := h.Clone(); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Clone of a nil handle: %v, want an error matching cuda.ErrClosed", err)
	}
	if s := h.Stream(); s != nil {
		t.Errorf("Stream of a nil handle: %v, want nil", s)
	}
}
