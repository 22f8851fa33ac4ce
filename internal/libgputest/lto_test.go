//go:build linux && (amd64 || arm64) && !cuda11080

package libgputest

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/nvjitlink"
	"github.com/gocuda/gocuda/generated/nvrtc"
)

// Two translation units: the kernel calls a device function defined in the
// other, so the cubin exists only if nvJitLink links the two LTO-IR
// modules.
const (
	ltoScaleSrc = `
extern "C" __device__ float lto_scale(float v) { return 3.0f * v + 1.0f; }
`
	ltoKernelSrc = `
extern "C" __device__ float lto_scale(float v);

extern "C" __global__ void lto_apply(const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] += lto_scale(x[i]);
}
`
	ltoKernel = "lto_apply"
)

// TestNVRTCLTOIRLinkedByNVJitLinkRunsOnGPU compiles two CUDA C++ units with
// NVRTC to LTO-IR (-dlto) for the device's architecture, links them with
// nvJitLink (-lto) into a cubin, loads it with cuModuleLoadData, launches the
// kernel with cuLaunchKernel and checks y += 3x+1 against the CPU.
func TestNVRTCLTOIRLinkedByNVJitLinkRunsOnGPU(t *testing.T) {
	g := newGPU(t)
	needLibrary(t, "NVRTC", nvrtc.Load, nvrtc.ErrNoLibrary, nvrtc.LibraryPath)
	needLibrary(t, "nvJitLink", nvjitlink.Load, nvjitlink.ErrNoLibrary, nvjitlink.LibraryPath)
	var rmaj, rmin int32
	check(t, "nvrtcVersion", nvrtc.Version(&rmaj, &rmin))
	var lmaj, lmin uint32
	check(t, "nvJitLinkVersion", nvjitlink.Version(&lmaj, &lmin))
	t.Logf("NVRTC %d.%d, nvJitLink %d.%d (headers of CUDA %d)", rmaj, rmin, lmaj, lmin, nvrtc.HeaderVersion())

	arch := fmt.Sprintf("-arch=sm_%d%d", g.major, g.minor)
	scaleIR := compileLTOIR(t, "lto_scale.cu", ltoScaleSrc, arch)
	kernelIR := compileLTOIR(t, "lto_apply.cu", ltoKernelSrc, arch)
	cubin := linkLTO(t, arch, []ltoInput{{"lto_scale.ltoir", scaleIR}, {"lto_apply.ltoir", kernelIR}})
	if !bytes.HasPrefix(cubin, []byte("\x7fELF")) {
		t.Fatalf("nvJitLink's cubin (%d bytes) is not an ELF image: % x", len(cubin), cubin[:min(len(cubin), 16)])
	}
	t.Logf("nvJitLink %s -lto: %d + %d bytes of LTO-IR linked into a %d-byte cubin", arch, len(scaleIR), len(kernelIR), len(cubin))

	var mod cu.CUmodule
	check(t, "cuModuleLoadData", cu.ModuleLoadData(&mod, unsafe.Pointer(&cubin[0])))
	t.Cleanup(func() {
		if err := cu.ModuleUnload(mod); err != nil {
			t.Errorf("cuModuleUnload: %v", err)
		}
	})
	var fn cu.CUfunction
	check(t, "cuModuleGetFunction", cu.ModuleGetFunction(&fn, mod, cStr(ltoKernel)))

	const n, block = 1000, 128
	r := rng()
	x, y0 := uniform32(r, n), uniform32(r, n)
	dx, dy := upload(t, x), upload(t, y0)

	// kernelParams is an array of pointers to the arguments: Go memory
	// holding Go pointers, which cgo allows only when they are pinned.
	px, py, pn := new(cu.CUdeviceptr), new(cu.CUdeviceptr), new(int32)
	*px, *py, *pn = dx, dy, n
	params := []unsafe.Pointer{unsafe.Pointer(px), unsafe.Pointer(py), unsafe.Pointer(pn)}
	var pin runtime.Pinner
	for _, p := range params {
		pin.Pin(p)
	}
	err := cu.LaunchKernel(fn, (n+block-1)/block, 1, 1, block, 1, 1, 0, g.stream, &params[0], nil)
	pin.Unpin()
	check(t, "cuLaunchKernel", err)
	g.wait(t)
	got := download[float32](t, dy, n)

	var worst float64
	for i := range n {
		want := float64(y0[i]) + 3*float64(x[i]) + 1
		e := math.Abs(float64(got[i])-want) / max(math.Abs(want), 1)
		if e > 1e-6 {
			t.Fatalf("y[%d] = %v, want %v (x=%v, y0=%v)", i, got[i], want, x[i], y0[i])
		}
		worst = max(worst, e)
	}
	t.Logf("%s<<<%d, %d>>> on %d floats: y += 3x+1 matches the CPU, largest relative error %.2g (y[0]=%v from x[0]=%v, y0[0]=%v)",
		ltoKernel, (n+block-1)/block, block, n, worst, got[0], x[0], y0[0])
}

// compileLTOIR compiles one unit with NVRTC to LTO-IR.
func compileLTOIR(t *testing.T, name, src, arch string) []byte {
	t.Helper()
	var prog nvrtc.NvrtcProgram
	check(t, "nvrtcCreateProgram", nvrtc.CreateProgram(&prog, cStr(src), cStr(name), 0, nil, nil))
	defer func() {
		if err := nvrtc.DestroyProgram(&prog); err != nil {
			t.Errorf("nvrtcDestroyProgram: %v", err)
		}
	}()
	opts := []string{arch, "-dlto", "-rdc=true"}
	var pin runtime.Pinner
	err := nvrtc.CompileProgram(prog, int32(len(opts)), cStrings(&pin, opts...))
	pin.Unpin()
	if err != nil {
		t.Fatalf("nvrtcCompileProgram %s %v: %v\n%s", name, opts, err, programLog(prog))
	}
	var size uint64
	check(t, "nvrtcGetLTOIRSize", nvrtc.GetLTOIRSize(prog, &size))
	if size == 0 {
		t.Fatalf("nvrtcGetLTOIRSize %s: 0 bytes", name)
	}
	ir := make([]byte, size)
	check(t, "nvrtcGetLTOIR", nvrtc.GetLTOIR(prog, &ir[0]))
	t.Logf("NVRTC %s %v: %d bytes of LTO-IR", name, opts, size)
	return ir
}

// cStrings returns NUL-terminated copies of ss as a char** for C. Each
// string is pinned with p, as cgo requires of Go pointers stored in Go
// memory that is passed to C; the caller unpins after the call.
func cStrings(p *runtime.Pinner, ss ...string) **byte {
	ptrs := make([]*byte, len(ss))
	for i, s := range ss {
		b := append([]byte(s), 0)
		p.Pin(&b[0])
		ptrs[i] = &b[0]
	}
	return &ptrs[0]
}

// cStr is s NUL-terminated, for a const char* the call does not keep.
func cStr(s string) *byte {
	b := append([]byte(s), 0)
	return &b[0]
}

func programLog(prog nvrtc.NvrtcProgram) string {
	var n uint64
	if nvrtc.GetProgramLogSize(prog, &n) != nil || n == 0 {
		return "(no log)"
	}
	b := make([]byte, n)
	if nvrtc.GetProgramLog(prog, &b[0]) != nil {
		return "(no log)"
	}
	return cString(b)
}

// ltoInput is one module of LTO-IR for nvJitLink and the name it goes by.
type ltoInput struct {
	name string
	ir   []byte
}

// linkLTO links LTO-IR modules with nvJitLink into a cubin.
func linkLTO(t *testing.T, arch string, inputs []ltoInput) []byte {
	t.Helper()
	opts := []string{arch, "-lto"}
	var h nvjitlink.NvJitLinkHandle
	var pin runtime.Pinner
	err := nvjitlink.Create(&h, uint32(len(opts)), cStrings(&pin, opts...))
	pin.Unpin()
	check(t, "nvJitLinkCreate", err)
	defer func() {
		if err := nvjitlink.Destroy(&h); err != nil {
			t.Errorf("nvJitLinkDestroy: %v", err)
		}
	}()
	for _, in := range inputs {
		if err := nvjitlink.AddData(h, nvjitlink.NVJITLINK_INPUT_LTOIR, unsafe.Pointer(&in.ir[0]), uint64(len(in.ir)), cStr(in.name)); err != nil {
			t.Fatalf("nvJitLinkAddData %s: %v\n%s", in.name, err, linkLog(h))
		}
	}
	if err := nvjitlink.Complete(h); err != nil {
		t.Fatalf("nvJitLinkComplete %v: %v\n%s", opts, err, linkLog(h))
	}
	var size uint64
	check(t, "nvJitLinkGetLinkedCubinSize", nvjitlink.GetLinkedCubinSize(h, &size))
	if size == 0 {
		t.Fatal("nvJitLinkGetLinkedCubinSize: 0 bytes")
	}
	cubin := make([]byte, size)
	check(t, "nvJitLinkGetLinkedCubin", nvjitlink.GetLinkedCubin(h, unsafe.Pointer(&cubin[0])))
	return cubin
}

func linkLog(h nvjitlink.NvJitLinkHandle) string {
	var n uint64
	if nvjitlink.GetErrorLogSize(h, &n) != nil || n == 0 {
		return "(no log)"
	}
	b := make([]byte, n)
	if nvjitlink.GetErrorLog(h, &b[0]) != nil {
		return "(no log)"
	}
	return cString(b)
}
