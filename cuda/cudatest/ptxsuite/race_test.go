package ptxsuite_test

import (
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
)

const sharedRaceSrc = `
extern "C" __global__ void shift(const int *x, int *y) {
	__shared__ int buf[128];
	buf[threadIdx.x] = x[threadIdx.x];
	// missing: __syncthreads();
	y[threadIdx.x] = buf[(threadIdx.x + 1) % 128];
}`

// Two threads of a block on the same shared bytes, one writing, with no
// barrier between: a race the detector reports with both lines.
func TestSharedMemoryRaceIsReported(t *testing.T) {
	onFake(t)
	if !cudatest.RaceDetectorEnabled() {
		t.Skip("the race detector is off")
	}
	e := ownContext(t)
	k := e.kernel(sharedRaceSrc, "shift")
	x, y := up(e, make([]int32, 128)), zeros[int32](e, 128)
	e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 128}}, x, y)
	if err := e.s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	races := cudatest.TakeSharedRaces()
	if len(races) == 0 {
		t.Fatal("no shared-memory race reported")
	}
	r := races[0]
	if r.Kernel != "shift" || !(r.Write || r.PrevWrite) || r.Line == 0 || r.PrevLine == 0 || !strings.Contains(r.String(), "no barrier") {
		t.Errorf("race %+v: want the kernel, a write and both lines", r)
	}
}

const producerSrc = `
extern "C" __global__ void produce(float *x, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] = i;
}
extern "C" __global__ void consume(const float *x, float *y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = x[i] * 2;
}`

// Kernels run from PTX on two streams, the second reading what the first
// wrote with nothing ordering them: a race between streams, reported
// whichever ran first; with the wait, none.
func TestStreamRaceBetweenInterpretedKernels(t *testing.T) {
	onFake(t)
	if !cudatest.RaceDetectorEnabled() {
		t.Skip("the race detector is off")
	}
	e := ownContext(t)
	s2, err := cuda.NewStream(e.s.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	prod, cons := e.kernel(producerSrc, "produce"), e.kernel(producerSrc, "consume")
	n := 1000
	x, err := cuda.AllocSlice[float32](e.s.Context(), n)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	y, err := cuda.AllocSlice[float32](e.s.Context(), n)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	for _, wait := range []bool{false, true} {
		e.launch(prod, cuda.Linear(n, 128), x, int32(n))
		if wait {
			if err := s2.WaitFor(e.s); err != nil {
				t.Fatal(err)
			}
		}
		if err := cons.Launch(s2, cuda.Linear(n, 128), x, y, int32(n)); err != nil {
			t.Fatal(err)
		}
		if err := s2.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if err := e.s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		races := cudatest.TakeRaces()
		if wait && len(races) > 0 {
			t.Errorf("with the wait: %d races, the first:\n%s", len(races), races[0])
		}
		if !wait && (len(races) == 0 || races[0].Access.Op != "kernel" || races[0].Previous.Op != "kernel") {
			t.Errorf("without the wait: races %v, want one between the two kernels", races)
		}
	}
}
