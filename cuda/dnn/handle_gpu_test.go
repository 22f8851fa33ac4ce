//go:build linux && (amd64 || arm64)

package dnn_test

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/dnn"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/generated/cudnn"
)

func TestVersionIsTheBindingsMajorVersion(t *testing.T) {
	v, err := dnn.Version()
	if errors.Is(err, cudnn.ErrNoLibrary) {
		libtest.Unavailable(t, "no cuDNN library: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	path, err := dnn.LibraryPath()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cuDNN %d from %s", v, path)
	if v/10000 != cudnn.CUDNN_MAJOR {
		t.Errorf("Version() = %d: major %d, but the bindings are of cuDNN %d", v, v/10000, cudnn.CUDNN_MAJOR)
	}
}

// smallConv is a convolution and its tensors, with the reference y.
type smallConv struct {
	cc    convCase
	x     dnn.Tensor[float32]
	w     dnn.Filter[float32]
	y     dnn.Tensor[float32]
	want  []float64
	scale []float64
}

// newSmallConv makes cc's tensors in NCHW on s, random from seed, and the
// reference output.
func newSmallConv(t *testing.T, s *cuda.Stream, cc convCase, seed uint64) smallConv {
	t.Helper()
	groups := max(cc.conv.Groups, 1)
	r := rand.New(rand.NewPCG(seed, 99))
	xd, wd := [4]int{cc.n, cc.c, cc.h, cc.w}, [4]int{cc.k, cc.c / groups, cc.r, cc.s}
	xh := random[float32](r, xd[0]*xd[1]*xd[2]*xd[3])
	wh := random[float32](r, wd[0]*wd[1]*wd[2]*wd[3])
	x := dnn.NewTensor(upload(t, s, xh), dnn.NCHW, xd[0], xd[1], xd[2], xd[3])
	w := dnn.NewFilter(upload(t, s, wh), dnn.NCHW, wd[0], wd[1], wd[2], wd[3])
	n, k, p, q, err := dnn.ConvOutput(cc.conv, x, w)
	if err != nil {
		t.Fatal(err)
	}
	y := dnn.NewTensor(filledSlice[float32](t, s, n*k*p*q, 0), dnn.NCHW, n, k, p, q)
	want, scale := refConv(dnn.NCHW, cc.conv, xd, to64(xh), wd, to64(wh), [4]int{n, k, p, q})
	return smallConv{cc, x, w, y, want, scale}
}

// check compares y, read on s, with the reference: "" or what is wrong.
func (sc smallConv) check(s *cuda.Stream) string {
	if err := s.Synchronize(); err != nil {
		return err.Error()
	}
	got := make([]float32, sc.y.Data.Len())
	if err := sc.y.Data.CopyTo(got); err != nil {
		return err.Error()
	}
	for i := range sc.want {
		if d := float64(got[i]) - sc.want[i]; !(d <= tolerance[float32](false, sc.want[i], sc.scale[i]) && -d <= tolerance[float32](false, sc.want[i], sc.scale[i])) {
			return "y differs from the reference"
		}
	}
	return ""
}

func TestClosedHandleRefusesCallsWithErrClosed(t *testing.T) {
	s, h := gpuHandle(t)
	sc := newSmallConv(t, s, convCases[0], 1)
	if err := h.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := dnn.ConvForward(h, sc.cc.conv, sc.x, sc.w, sc.y); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("ConvForward after Close: %v, want ErrClosed", err)
	}
	if err := dnn.Softmax(h, dnn.Accurate, dnn.Channels, sc.y, dnn.NewTensor(filledSlice[float32](t, s, sc.y.Data.Len(), 0), dnn.NCHW, sc.y.N, sc.y.C, sc.y.H, sc.y.W)); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Softmax after Close: %v, want ErrClosed", err)
	}
	if err := h.SetTF32(true); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("SetTF32 after Close: %v, want ErrClosed", err)
	}
	if err := h.SetStream(s); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("SetStream after Close: %v, want ErrClosed", err)
	}
	if _, err := h.Clone(); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Clone after Close: %v, want ErrClosed", err)
	}
	// Close is idempotent, as for every handle of package cuda.
	if err := h.Close(); err != nil {
		t.Errorf("second Close: %v, want nil", err)
	}
}

func TestCloneOutlivesTheHandleItCameFrom(t *testing.T) {
	s, h := gpuHandle(t)
	c, err := h.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sc := newSmallConv(t, s, convCases[3], 2)
	// The plan made through h serves c: one cuDNN handle.
	if err := dnn.ConvForward(h, sc.cc.conv, sc.x, sc.w, sc.y); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	// The first convolution done, y is cleared for the clone's.
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if err := sc.y.Data.Fill(0); err != nil {
		t.Fatal(err)
	}
	if err := dnn.ConvForward(c, sc.cc.conv, sc.x, sc.w, sc.y); err != nil {
		t.Fatalf("ConvForward on the clone: %v", err)
	}
	if msg := sc.check(s); msg != "" {
		t.Error(msg)
	}
}

func TestSetStreamMovesTheWork(t *testing.T) {
	s, h := gpuHandle(t)
	s2, err := cuda.NewStream(s.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	sc := newSmallConv(t, s, convCases[1], 3)
	if err := s.Synchronize(); err != nil { // the uploads are on s
		t.Fatal(err)
	}
	if err := h.SetStream(s2); err != nil {
		t.Fatalf("SetStream: %v", err)
	}
	if !h.Stream().IsSameQueue(s2) {
		t.Error("Stream() is not the stream set")
	}
	if err := dnn.ConvForward(h, sc.cc.conv, sc.x, sc.w, sc.y); err != nil {
		t.Fatal(err)
	}
	if msg := sc.check(s2); msg != "" {
		t.Error(msg)
	}
}

// TestConcurrentCallsOnOneHandleAreCorrect runs convolutions of several
// shapes from many goroutines at once on one handle and its clones, each
// goroutine with its own stream-ordered tensors, and checks every result:
// under -race it also checks the handle's own state.
func TestConcurrentCallsOnOneHandleAreCorrect(t *testing.T) {
	s, h := gpuHandle(t)
	const workers = 8
	convs := make([]smallConv, workers)
	for i := range convs {
		convs[i] = newSmallConv(t, s, convCases[i%len(convCases)], uint64(10+i))
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]string, workers)
	for i := range workers {
		wg.Go(func() {
			hh := h
			if i%2 == 1 {
				c, err := h.Clone()
				if err != nil {
					errs[i] = err.Error()
					return
				}
				defer c.Close()
				hh = c
			}
			sc := convs[i]
			for range 5 {
				if err := dnn.ConvForward(hh, sc.cc.conv, sc.x, sc.w, sc.y); err != nil {
					errs[i] = err.Error()
					return
				}
			}
			// The handle's stream is s: every goroutine's work is on it.
			errs[i] = sc.check(s)
		})
	}
	wg.Wait()
	for i, e := range errs {
		if e != "" {
			t.Errorf("worker %d (%s): %s", i, convs[i].cc.name, e)
		}
	}
}
