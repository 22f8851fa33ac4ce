//go:build linux && (amd64 || arm64) && !cuda11080

package cuda_test

import (
	"errors"
	"fmt"
	"log"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/cuda/nvrtc"
)

// conditionSrc declares the device function that sets a graph's condition
// as the CUDA runtime's headers do, so that NVRTC compiles it without
// them, and the kernels of the conditional-node example and tests.
const conditionSrc = `
typedef __device_builtin__ unsigned long long cudaGraphConditionalHandle;
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value);

// One step of x <- (x + 2) / 2, which converges to 2: the loop goes on
// while x is more than 1 away.
extern "C" __global__ void converge(float *x, unsigned *iters, cudaGraphConditionalHandle loop) {
	float d = (*x - 2.0f) * 0.5f;
	*x = 2.0f + d;
	*iters += 1;
	cudaGraphSetConditional(loop, d > 1.0f);
}

extern "C" __global__ void setcond(cudaGraphConditionalHandle c, unsigned value) {
	cudaGraphSetConditional(c, value);
}`

// A loop that runs on the device until a kernel says it has converged: a
// graph with a while node, whose body is one kernel that takes a step and
// sets the loop's condition. The host launches the graph once and waits;
// the number of iterations is counted on the device.
func Example_graphWhile() {
	s, err := cuda.OpenStream(0)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	ctx := s.Context()
	res, err := nvrtc.Compile(conditionSrc)
	if err != nil {
		log.Fatal(err)
	}
	mod, err := cuda.LoadModule(ctx, res.PTX)
	if err != nil {
		log.Fatal(err)
	}
	defer mod.Close()
	converge, err := mod.Function("converge")
	if err != nil {
		log.Fatal(err)
	}
	x, err := cuda.AllocSliceFrom(s, []float32{1026})
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	iters, err := cuda.AllocSliceFrom(s, []uint32{0})
	if err != nil {
		log.Fatal(err)
	}
	defer iters.Close()

	g, err := cuda.NewGraph(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	loop, err := g.NewCondition(1, true) // the body runs at least once
	if err != nil {
		log.Fatal(err)
	}
	_, body, err := g.AddWhile(nil, loop)
	if err != nil {
		log.Fatal(err)
	}
	defer body.Close()
	one := cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}
	if _, err := body.AddKernel(nil, converge, one, x, iters, loop.Handle()); err != nil {
		log.Fatal(err)
	}
	exec, err := g.Instantiate()
	if err != nil {
		log.Fatal(err)
	}
	defer exec.Close()
	if err := exec.Launch(s); err != nil {
		log.Fatal(err)
	}
	got := make([]float32, 1)
	n := make([]uint32, 1)
	if err := x.CopyToHost(s, got); err != nil {
		log.Fatal(err)
	}
	if err := iters.CopyToHost(s, n); err != nil {
		log.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d iterations, x = %v\n", n[0], got[0])
}

// conditionGPU skips t where conditional nodes cannot run: no GPU, the
// fake driver (which models none), no NVRTC, or a driver without them.
func conditionGPU(t *testing.T) {
	t.Helper()
	exampleDevice(t, 0, 0)
	if cudatest.Active() {
		t.Skip("the fake driver models no conditional nodes (cuGraphConditionalHandleCreate)")
	}
	needNVRTC(t)
	if v, err := cuda.DriverVersion(); err != nil || v < 12040 {
		t.Skipf("conditional while nodes need a driver for CUDA 12.4 (driver %d, %v)", v, err)
	}
}

func TestGraphWhileOnGPU(t *testing.T) {
	conditionGPU(t)
	if got, want := captureStdout(t, Example_graphWhile), "10 iterations, x = 3\n"; got != want {
		t.Fatalf("Example_graphWhile printed %q, want %q", got, want)
	}
}

// If and switch nodes, their condition set by a kernel before them.
func TestGraphIfSwitchOnGPU(t *testing.T) {
	conditionGPU(t)
	dev, err := cuda.GetDevice(0)
	condOK(t, err)
	ctx, err := cuda.PrimaryContext(dev)
	condOK(t, err)
	defer ctx.Close()
	s, err := cuda.NewStream(ctx)
	condOK(t, err)
	defer s.Close()
	res, err := nvrtc.Compile(conditionSrc)
	condOK(t, err)
	mod, err := cuda.LoadModule(ctx, res.PTX)
	condOK(t, err)
	defer mod.Close()
	setcond, err := mod.Function("setcond")
	condOK(t, err)
	out, err := cuda.AllocSlice[uint32](ctx, 4)
	condOK(t, err)
	defer out.Close()
	one := cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}

	for _, tc := range []struct {
		name  string
		value uint32
		want  []uint32
	}{
		{"if taken", 1, []uint32{7, 0, 0, 0}},
		{"if not taken", 0, []uint32{0, 0, 0, 0}},
	} {
		condOK(t, out.Fill(0))
		g, err := cuda.NewGraph(ctx)
		condOK(t, err)
		c, err := g.NewCondition(0, true)
		condOK(t, err)
		set, err := g.AddKernel(nil, setcond, one, c.Handle(), tc.value)
		condOK(t, err)
		_, body, err := g.AddIf([]cuda.GraphNode{set}, c)
		condOK(t, err)
		first, err := out.Sub(0, 1)
		condOK(t, err)
		_, err = cuda.AddFill(body, nil, first, 7)
		condOK(t, err)
		condOK(t, first.Close())
		condOK(t, body.Close())
		runOnce(t, g, s)
		checkUints(t, tc.name, out, tc.want)
	}

	if v, err := cuda.DriverVersion(); err != nil || v < 12080 {
		t.Skipf("switch nodes need a driver for CUDA 12.8 (driver %d, %v)", v, err)
	}
	for value, want := range [][]uint32{{1, 0, 0, 0}, {0, 2, 0, 0}, {0, 0, 3, 0}, {0, 0, 0, 0}} {
		condOK(t, out.Fill(0))
		g, err := cuda.NewGraph(ctx)
		condOK(t, err)
		c, err := g.NewCondition(0, true)
		condOK(t, err)
		set, err := g.AddKernel(nil, setcond, one, c.Handle(), uint32(value))
		condOK(t, err)
		_, bodies, err := g.AddSwitch([]cuda.GraphNode{set}, c, 3)
		if errors.Is(err, cuda.ErrMissingFunction) {
			t.Skipf("no switch nodes: %v", err)
		}
		condOK(t, err)
		for i, body := range bodies {
			part, err := out.Sub(i, i+1)
			condOK(t, err)
			_, err = cuda.AddFill(body, nil, part, uint32(i+1))
			condOK(t, err)
			condOK(t, part.Close())
			condOK(t, body.Close())
		}
		runOnce(t, g, s)
		checkUints(t, fmt.Sprintf("switch on %d", value), out, want)
	}
}

// runOnce instantiates g, closes it, and launches the executable graph
// once on s, waiting for it.
func runOnce(t *testing.T, g *cuda.Graph, s *cuda.Stream) {
	t.Helper()
	exec, err := g.Instantiate()
	condOK(t, err)
	condOK(t, g.Close())
	condOK(t, exec.Launch(s))
	condOK(t, s.Synchronize())
	condOK(t, exec.Close())
}

func checkUints(t *testing.T, what string, s *cuda.Slice[uint32], want []uint32) {
	t.Helper()
	got := make([]uint32, s.Len())
	condOK(t, s.CopyTo(got))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}

// The conditional nodes' checks before the driver, which the fake driver
// runs too (it refuses the condition itself).
func TestGraphConditionErrors(t *testing.T) {
	exampleDevice(t, 0, 0)
	dev, err := cuda.GetDevice(0)
	condOK(t, err)
	ctx, err := cuda.PrimaryContext(dev)
	condOK(t, err)
	defer ctx.Close()
	g, err := cuda.NewGraph(ctx)
	condOK(t, err)
	defer g.Close()
	if _, _, err := g.AddWhile(nil, cuda.GraphCondition{}); err == nil {
		t.Error("a while node of the zero condition was accepted")
	}
	_, err = g.NewCondition(1, true)
	if cudatest.Active() {
		if !errors.Is(err, cuda.ErrMissingFunction) {
			t.Errorf("the fake driver's refusal of a condition: %v", err)
		}
		return
	}
	if v, verr := cuda.DriverVersion(); verr == nil && v < 12030 {
		if !errors.Is(err, cuda.ErrMissingFunction) {
			t.Errorf("a condition on a driver for CUDA %d: %v", v, err)
		}
		return
	}
	condOK(t, err)
	other, err := cuda.NewGraph(ctx)
	condOK(t, err)
	defer other.Close()
	c, err := other.NewCondition(0, false)
	condOK(t, err)
	if _, _, err := g.AddIf(nil, c); err == nil {
		t.Error("an if node of another graph's condition was accepted")
	}
	if _, _, err := g.AddSwitch(nil, c, 0); err == nil {
		t.Error("a switch node of no bodies was accepted")
	}
}

func condOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
