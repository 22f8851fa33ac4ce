package ptxsuite_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuda"
)

const saxpySrc = `
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = a * x[i] + y[i];
}`

func TestSaxpy(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 100003
		x, y := floats(n, 1), floats(n, 2)
		want := make([]float32, n)
		for i := range want {
			want[i] = 2.5*x[i] + y[i]
		}
		k := e.kernel(saxpySrc, "saxpy")
		dx, dy := up(e, x), up(e, y)
		e.launch(k, cuda.Linear(n, 256), float32(2.5), dx, dy, int32(n))
		same(e, "y", down(e, dy), want, 1e-6)
	})
}
