package fakecuda_test

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/fakecuda"
)

// launchEx calls cuLaunchKernelEx with attrs and params in Go memory,
// pinned for the call as cgo's rules want of pointers inside the config.
func launchEx(f cu.CUfunction, s cu.CUstream, grid, block [3]uint32, shmem uint32, attrs []cu.CUlaunchAttribute, params ...unsafe.Pointer) error {
	var pin runtime.Pinner
	defer pin.Unpin()
	cfg := cu.CUlaunchConfig{
		GridDimX: grid[0], GridDimY: grid[1], GridDimZ: grid[2],
		BlockDimX: block[0], BlockDimY: block[1], BlockDimZ: block[2],
		SharedMemBytes: shmem, HStream: s, NumAttrs: uint32(len(attrs)),
	}
	if len(attrs) > 0 {
		pin.Pin(&attrs[0])
		cfg.Attrs = &attrs[0]
	}
	var kp *unsafe.Pointer
	if len(params) > 0 {
		for _, p := range params {
			pin.Pin(p)
		}
		kp = &params[0]
	}
	return cu.LaunchKernelEx(&cfg, f, kp, nil)
}

func attr(id cu.CUlaunchAttributeID, set func(*cu.CUlaunchAttributeValue)) cu.CUlaunchAttribute {
	a := cu.CUlaunchAttribute{Id: id}
	set(&a.Value)
	return a
}

func cluster(x, y, z uint32) cu.CUlaunchAttribute {
	return attr(cu.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, func(v *cu.CUlaunchAttributeValue) {
		*v.ClusterDim() = cu.CUlaunchAttributeValue_clusterDim{X: x, Y: y, Z: z}
	})
}

var cooperative = attr(cu.CU_LAUNCH_ATTRIBUTE_COOPERATIVE, func(v *cu.CUlaunchAttributeValue) { *v.Cooperative() = 1 })

func TestFunctionsAndLaunchEx(t *testing.T) {
	primary(t)
	h, err := lib.NewFunction(fakecuda.Function{Registers: 64, StaticShared: 4096, Params: []int{8, 4}})
	must(t, err)
	defer func() { must(t, lib.FreeFunction(h)) }()
	f := cu.CUfunction(h)
	if _, err := lib.NewFunction(fakecuda.Function{Params: []int{16}}); err == nil {
		t.Error("a parameter of 16 bytes was taken")
	}

	for attr, want := range map[cu.CUfunction_attribute]int32{
		cu.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:             1024,
		cu.CU_FUNC_ATTRIBUTE_NUM_REGS:                          64,
		cu.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:                 4096,
		cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:     49152 - 4096,
		cu.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: 0,
	} {
		var v int32
		must(t, cu.FuncGetAttribute(&v, attr, f))
		if v != want {
			t.Errorf("%v = %d, want %d", attr, v, want)
		}
	}
	var v int32
	is(t, "cuFuncGetAttribute of no function", cu.FuncGetAttribute(&v, cu.CU_FUNC_ATTRIBUTE_NUM_REGS, 0x1234), cu.CUDA_ERROR_INVALID_HANDLE)
	is(t, "too much dynamic shared memory", cu.FuncSetAttribute(f, cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232448), cu.CUDA_ERROR_INVALID_VALUE)
	must(t, cu.FuncSetAttribute(f, cu.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000))

	// 64 registers a thread: 4 blocks of 256 threads per multiprocessor.
	must(t, cu.OccupancyMaxActiveBlocksPerMultiprocessor(&v, f, 256, 0))
	if v != 4 {
		t.Errorf("occupancy of 256 threads: %d blocks, want 4", v)
	}
	must(t, cu.OccupancyMaxActiveBlocksPerMultiprocessor(&v, f, 1024, 100000))
	if v != 1 {
		t.Errorf("occupancy of 1024 threads with 100000 bytes: %d blocks, want 1", v)
	}
	done := make(chan error)
	go func() { // a thread without a current context
		var n int32
		done <- cu.OccupancyMaxActiveBlocksPerMultiprocessor(&n, f, 256, 0)
	}()
	is(t, "occupancy without a context", <-done, cu.CUDA_ERROR_INVALID_CONTEXT)

	s := stream(t, 0)
	p, n := uint64(0xabc), uint32(5)
	params := []unsafe.Pointer{unsafe.Pointer(&p), unsafe.Pointer(&n)}
	prio := attr(cu.CU_LAUNCH_ATTRIBUTE_PRIORITY, func(v *cu.CUlaunchAttributeValue) { *v.Priority() = -2 })
	must(t, launchEx(f, s, [3]uint32{8, 2, 1}, [3]uint32{256, 1, 1}, 512, []cu.CUlaunchAttribute{cluster(4, 2, 1), prio}, params...))
	l, count := lib.LastLaunch()
	if count == 0 || l.Function != h || l.Stream != uint64(s) || l.Grid != [3]uint32{8, 2, 1} || l.SharedMemBytes != 512 ||
		len(l.Attrs) != 2 || l.Attrs[0].ID != int(cu.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) || l.Attrs[0].Value[4] != 2 ||
		l.Attrs[1].ID != int(cu.CU_LAUNCH_ATTRIBUTE_PRIORITY) || int8(l.Attrs[1].Value[0]) != -2 ||
		len(l.Params) != 2 || l.Params[0] != 0xabc || l.Params[1] != 5 {
		t.Errorf("last launch %+v (of %d)", l, count)
	}

	one := [3]uint32{1, 1, 1}
	for _, c := range []struct {
		what        string
		grid, block [3]uint32
		shmem       uint32
		attrs       []cu.CUlaunchAttribute
		params      []unsafe.Pointer
		f           cu.CUfunction
		want        cu.CUresult
	}{
		{"no function", one, one, 0, nil, params, 0x1234, cu.CUDA_ERROR_INVALID_HANDLE},
		{"no parameters", one, one, 0, nil, nil, f, cu.CUDA_ERROR_INVALID_VALUE},
		{"grid of 0", [3]uint32{0, 1, 1}, one, 0, nil, params, f, cu.CUDA_ERROR_INVALID_VALUE},
		{"block of 2048", one, [3]uint32{64, 32, 1}, 0, nil, params, f, cu.CUDA_ERROR_INVALID_VALUE},
		{"shared memory beyond the kernel's", one, one, 100001, nil, params, f, cu.CUDA_ERROR_INVALID_VALUE},
		{"cluster not dividing", [3]uint32{6, 1, 1}, one, 0, []cu.CUlaunchAttribute{cluster(4, 1, 1)}, params, f, cu.CUDA_ERROR_INVALID_CLUSTER_SIZE},
		{"cluster of 0", [3]uint32{6, 1, 1}, one, 0, []cu.CUlaunchAttribute{cluster(0, 1, 1)}, params, f, cu.CUDA_ERROR_INVALID_CLUSTER_SIZE},
		{"cluster of 16", [3]uint32{16, 1, 1}, one, 0, []cu.CUlaunchAttribute{cluster(16, 1, 1)}, params, f, cu.CUDA_ERROR_INVALID_CLUSTER_SIZE},
		{"attribute twice", [3]uint32{4, 1, 1}, one, 0, []cu.CUlaunchAttribute{cluster(2, 1, 1), cluster(4, 1, 1)}, params, f, cu.CUDA_ERROR_INVALID_VALUE},
		{"cooperative, too large", [3]uint32{4*132 + 1, 1, 1}, [3]uint32{256, 1, 1}, 0, []cu.CUlaunchAttribute{cooperative}, params, f, cu.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE},
	} {
		err := launchEx(c.f, s, c.grid, c.block, c.shmem, c.attrs, c.params...)
		is(t, c.what, err, c.want)
	}
	if _, n := lib.LastLaunch(); n != count {
		t.Errorf("refused launches were recorded: %d, was %d", n, count)
	}
	must(t, launchEx(f, s, [3]uint32{4 * 132, 1, 1}, [3]uint32{256, 1, 1}, 0, []cu.CUlaunchAttribute{cooperative}, params...))
	must(t, cu.FuncSetAttribute(f, cu.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1))
	must(t, launchEx(f, s, [3]uint32{16, 1, 1}, one, 0, []cu.CUlaunchAttribute{cluster(16, 1, 1)}, params...))
	is(t, "cluster of 32", launchEx(f, s, [3]uint32{32, 1, 1}, one, 0, []cu.CUlaunchAttribute{cluster(32, 1, 1)}, params...), cu.CUDA_ERROR_INVALID_CLUSTER_SIZE)

	// The fake captures no launch: the capture is invalidated.
	must(t, cu.StreamBeginCapture(s, cu.CU_STREAM_CAPTURE_MODE_GLOBAL))
	is(t, "a launch in a capture", launchEx(f, s, one, one, 0, nil, params...), cu.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
	var g cu.CUgraph
	is(t, "ending the capture", cu.StreamEndCapture(s, &g), cu.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
	if g != 0 {
		must(t, cu.GraphDestroy(g))
	}
}
