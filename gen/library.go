package main

import (
	"fmt"
	"sort"

	"github.com/gocuda/gocuda/internal/manifest"
)

// library describes one header family the generator binds, as data: the
// parse, model and emit steps are the same for all of them.
type library struct {
	pkg    string // Go package and directory under generated/: "nvrtc"
	header string // header file in the cache: "nvrtc.h"
	prefix string // prefix of the functions bound, dropped from their Go names: "nvrtc"
	result string // the Go name of the status type the functions return: "NvrtcResult"
	// resultPkg is the package that declares result when it is another's
	// (cuBLASLt returns cuBLAS's cublasStatus_t).
	resultPkg string
	// own are the headers whose declarations the package binds, when they
	// are more than header (cublas_v2.h selects the symbols that
	// cublas_api.h declares).
	own []string
	// what names the library in doc comments: "the driver symbol X".
	what string
	// name is the library's name in prose: "cuBLAS".
	name string
	// preload is a glob of companion libraries in the directory of the
	// library opened, loaded first (see dynlib.PreloadSiblings).
	preload string
	// reference is the documentation page each binding points to.
	reference string
	// sonames are the library names the loader dlopens, by major version
	// of the family the library follows; nil when the handwritten loader
	// knows them (libcuda.so.1 does not change with the version).
	sonames map[int][]string
	// getProcAddress marks a library whose entry points come through
	// cuGetProcAddress: the table then says which may.
	getProcAddress bool
	// apiDiff marks a library whose API data (z*_api.txt) and changes
	// across the matrix (API_CHANGES.md) are generated.
	apiDiff bool
	// family is the manifest family whose versions the library follows,
	// nil for CUDA's (see versions).
	family *manifest.Family
	// statusFields are the fields of result, by their Go names, where
	// the status is a struct (cuFile's CUfileError_t): the first the
	// library's own code, success when zero, the others codes it carries
	// from elsewhere (the driver's CUresult).
	statusFields []statusField
}

// statusField is one field of a status that is a struct, and its type:
// the library's own, or pkg's.
type statusField struct{ name, typ, pkg string }

var (
	cuLib = &library{
		pkg: "cu", header: "cuda.h", prefix: "cu", result: "CUresult",
		what:           "driver symbol",
		reference:      "https://docs.nvidia.com/cuda/cuda-driver-api/",
		getProcAddress: true,
		apiDiff:        true,
	}
	nvrtcLib = &library{
		name: "NVRTC",
		pkg:  "nvrtc", header: "nvrtc.h", prefix: "nvrtc", result: "NvrtcResult",
		what:      "NVRTC symbol",
		reference: "https://docs.nvidia.com/cuda/nvrtc/",
		// NVRTC 11.x kept the soname of 11.2 for every later 11 release.
		sonames: map[int][]string{11: {"libnvrtc.so.11.2"}, 12: {"libnvrtc.so.12"}, 13: {"libnvrtc.so.13"}},
		// NVRTC dlopens its builtins (libnvrtc-builtins.so.12.4) by
		// soname: a library opened from a directory off the search path
		// finds them loaded already.
		preload: "libnvrtc-builtins.so.*",
	}
	// libtypesLib binds the types the libraries share (cudaDataType,
	// libraryPropertyType): a package of types and no functions.
	libtypesLib = &library{
		pkg: "libtypes", header: "library_types.h", what: "type",
		reference: "https://docs.nvidia.com/cuda/cuda-runtime-api/",
	}
	nvjitlinkLib = &library{
		name: "nvJitLink",
		pkg:  "nvjitlink", header: "nvJitLink.h", prefix: "nvJitLink", result: "NvJitLinkResult",
		what:      "nvJitLink symbol",
		reference: "https://docs.nvidia.com/cuda/nvjitlink/",
		sonames:   map[int][]string{12: {"libnvJitLink.so.12"}, 13: {"libnvJitLink.so.13"}},
	}
	cublasLib = &library{
		name: "cuBLAS",
		pkg:  "cublas", header: "cublas_v2.h", own: []string{"cublas_v2.h", "cublas_api.h"},
		prefix: "cublas", result: "CublasStatus_t",
		what:      "cuBLAS symbol",
		reference: "https://docs.nvidia.com/cuda/cublas/",
		sonames:   map[int][]string{11: {"libcublas.so.11"}, 12: {"libcublas.so.12"}, 13: {"libcublas.so.13"}},
	}
	cublasltLib = &library{
		name: "cuBLASLt",
		pkg:  "cublaslt", header: "cublasLt.h", prefix: "cublasLt",
		result: "CublasStatus_t", resultPkg: "cublas",
		what:      "cuBLASLt symbol",
		reference: "https://docs.nvidia.com/cuda/cublas/",
		sonames:   map[int][]string{11: {"libcublasLt.so.11"}, 12: {"libcublasLt.so.12"}, 13: {"libcublasLt.so.13"}},
	}
	curandLib = &library{
		name: "cuRAND",
		pkg:  "curand", header: "curand.h", prefix: "curand", result: "CurandStatus_t",
		what:      "cuRAND symbol",
		reference: "https://docs.nvidia.com/cuda/curand/",
		// cuRAND has kept major version 10 since CUDA 10.
		sonames: map[int][]string{11: {"libcurand.so.10"}, 12: {"libcurand.so.10"}, 13: {"libcurand.so.10"}},
	}
	cufftLib = &library{
		name: "cuFFT",
		pkg:  "cufft", header: "cufft.h", prefix: "cufft", result: "CufftResult",
		what:      "cuFFT symbol",
		reference: "https://docs.nvidia.com/cuda/cufft/",
		sonames:   map[int][]string{11: {"libcufft.so.10"}, 12: {"libcufft.so.11"}, 13: {"libcufft.so.12"}},
	}
	cusparseLib = &library{
		name: "cuSPARSE",
		pkg:  "cusparse", header: "cusparse.h", prefix: "cusparse", result: "CusparseStatus_t",
		what:      "cuSPARSE symbol",
		reference: "https://docs.nvidia.com/cuda/cusparse/",
		sonames:   map[int][]string{11: {"libcusparse.so.11"}, 12: {"libcusparse.so.12"}, 13: {"libcusparse.so.12"}},
	}
	cusolverLib = &library{
		name: "cuSOLVER",
		pkg:  "cusolver", header: "cusolverDn.h", own: []string{"cusolverDn.h", "cusolver_common.h"},
		prefix: "cusolver", result: "CusolverStatus_t",
		what:      "cuSOLVER symbol",
		reference: "https://docs.nvidia.com/cuda/cusolver/",
		sonames:   map[int][]string{11: {"libcusolver.so.11"}, 12: {"libcusolver.so.11"}, 13: {"libcusolver.so.12"}},
	}
	// nvjpegLib is nvJPEG, whose soname took the CUDA major version from
	// 11 on, as cuBLAS's did.
	nvjpegLib = &library{
		name: "nvJPEG",
		pkg:  "nvjpeg", header: "nvjpeg.h", prefix: "nvjpeg", result: "NvjpegStatus_t",
		what:      "nvJPEG symbol",
		reference: "https://docs.nvidia.com/cuda/nvjpeg/",
		sonames:   map[int][]string{11: {"libnvjpeg.so.11"}, 12: {"libnvjpeg.so.12"}, 13: {"libnvjpeg.so.13"}},
	}
	// ncclLib follows the NCCL versions of the manifest, not CUDA's: its
	// sonames are by NCCL major version (libnccl.so.2 since NCCL 2.0), and
	// nccl.h is parsed with the runtime headers of the default CUDA version
	// (it takes only cudaStream_t from them, and the bfloat16 type that
	// cuda_bf16.h announces).
	ncclLib = &library{
		name: "NCCL",
		pkg:  "nccl", header: "nccl.h", prefix: "nccl", result: "NcclResult_t",
		what:      "NCCL symbol",
		reference: "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/api.html",
		sonames:   map[int][]string{2: {"libnccl.so.2"}},
		family:    manifest.NCCL,
	}
	// cudnnLib follows the cuDNN versions of the manifest: cudnn.h and the
	// headers it includes (the graph API, the legacy operations,
	// convolutions, the advanced ones), parsed with the runtime headers of
	// the default CUDA version. libcudnn.so.9 exports every function and
	// loads its sub-libraries itself, by soname.
	cudnnLib = &library{
		name: "cuDNN",
		pkg:  "cudnn", header: "cudnn.h",
		own:    []string{"cudnn.h", "cudnn_version.h", "cudnn_graph.h", "cudnn_ops.h", "cudnn_adv.h", "cudnn_cnn.h"},
		prefix: "cudnn", result: "CudnnStatus_t",
		what:      "cuDNN symbol",
		reference: "https://docs.nvidia.com/deeplearning/cudnn/api/",
		sonames:   map[int][]string{9: {"libcudnn.so.9"}},
		family:    manifest.CuDNN,
	}
	// cufileLib is cuFile (GPUDirect Storage), whose functions return a
	// struct, its own code beside the driver's, and whose soname has kept
	// major version 0. cufile.h includes cuda.h and the socket headers
	// of the C library.
	cufileLib = &library{
		name: "cuFile",
		pkg:  "cufile", header: "cufile.h", prefix: "cuFile", result: "CUfileError_t",
		statusFields: []statusField{{"Err", "CUfileOpError", ""}, {"Cu_err", "CUresult", "cu"}},
		what:         "cuFile symbol",
		reference:    "https://docs.nvidia.com/gpudirect-storage/api-reference-guide/",
		sonames:      map[int][]string{11: {"libcufile.so.0"}, 12: {"libcufile.so.0"}, 13: {"libcufile.so.0"}},
	}
	// libraries are every header family bound, cuda.h first, and each
	// package after those whose types it takes.
	libraries = []*library{cuLib, nvrtcLib, libtypesLib, nvjitlinkLib, cublasLib, cublasltLib, curandLib, cufftLib, cusparseLib, cusolverLib, nvjpegLib, cufileLib, ncclLib, cudnnLib}
)

// cudaCxxIncludes are the headers that the libraries' headers and the
// runtime's headers they include include only in C++, device-code (nvcc,
// NVRTC) or Windows sections; in C, none is reached (see ParseSet).
var cudaCxxIncludes = []string{
	"utility", "cstring", "cstdlib", "cstdarg", "string", "typeinfo", "functional", "cxxabi.h",
	"crt/device_functions.h", "crt/common_functions.h", "device_launch_parameters.h",
	"nvrtc_device_runtime.h", "cuda_surface_types.h", "cuda_texture_types.h", "target",
	"crtdefs.h", "corecrt.h", "Windows.h", "DbgHelp.h",
	// nccl.h from 2.28 on, under __cplusplus.
	"cuda_fp8.h",
}

// ownFiles are the headers whose declarations the library's package binds.
func (l *library) ownFiles() []string {
	if len(l.own) > 0 {
		return l.own
	}
	return []string{l.header}
}

// filePrefix starts the name of every file the generator owns in the
// library's package: zcu_, znvrtc_.
func (l *library) filePrefix() string { return "z" + l.pkg + "_" }

// versions is the family whose versions the library follows.
func (l *library) versions() *manifest.Family {
	if l.family == nil {
		return manifest.CUDA
	}
	return l.family
}

// provides reports whether version v of the matrix has the library's header.
func (l *library) provides(v manifest.Version) bool {
	if v.Family() != l.versions() {
		return false
	}
	_, ok := v.Header(l.header)
	return ok || l.header == v.MainHeader()
}

// readHeader returns the cached header of the library for v.
func (l *library) readHeader(v manifest.Version) ([]byte, string, error) {
	return readCachedHeader(v, l.header)
}

// matrix is the matrix of m whose versions the library follows. m is the
// full manifest, or that matrix already.
func (l *library) matrix(m *manifest.Manifest) *manifest.Manifest {
	return m.Matrix(l.versions())
}

// providers are the versions of m that have the library's header, in
// ascending order. m is the full manifest, or the library's own matrix.
func (l *library) providers(m *manifest.Manifest) []manifest.Version {
	var vs []manifest.Version
	for _, v := range l.matrix(m).Versions {
		if l.provides(v) {
			vs = append(vs, v)
		}
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].Number() < vs[j].Number() })
	return vs
}

// sonamesFor returns the names the loader of version v opens.
func (l *library) sonamesFor(v manifest.Version) ([]string, error) {
	names := l.sonames[v.Major()]
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no soname known for %s major version %d (add it to the library's description in gen/library.go)", l.header, l.versions().Name, v.Major())
	}
	return names, nil
}

// exportName is the name a library package gives a C type: its C name
// with the first letter upper-cased when it is lower-case.
func exportName(n string) string {
	if n != "" && n[0] >= 'a' && n[0] <= 'z' {
		return string(n[0]-'a'+'A') + n[1:]
	}
	return n
}

// exportTypes gives each type and enumerator of the model whose C name
// starts with a lower-case letter (nvrtcProgram, nvrtcResult, ncclSum) the
// same name with its first letter upper-cased (NvrtcProgram, NcclSum), the
// nearest spelling Go exports.
// References to it throughout the model follow.
func exportTypes(m *Module) {
	rename := exportName
	var fix func(t *Type)
	fix = func(t *Type) {
		if t == nil {
			return
		}
		if t.Kind == Named && t.Pkg == "" {
			t.Name = rename(t.Name)
		}
		fix(t.Elem)
	}
	for i := range m.Enums {
		m.Enums[i].Name = rename(m.Enums[i].Name)
		// NCCL's enumerators start lower-case too (ncclSum): Go would
		// hide them.
		e := &m.Enums[i]
		for j := range e.Values {
			v := &e.Values[j]
			if n := rename(v.Name); n != v.Name {
				if e.CNames == nil {
					e.CNames = map[string]string{}
				}
				e.CNames[n], v.Name = v.Name, n
			}
		}
	}
	for i := range m.Records {
		r := &m.Records[i]
		r.Name = rename(r.Name)
		for j := range r.Fields {
			fix(&r.Fields[j].Type)
		}
	}
	for i := range m.Typedefs {
		m.Typedefs[i].Name = rename(m.Typedefs[i].Name)
		fix(&m.Typedefs[i].Target)
	}
	for i := range m.Functions {
		f := &m.Functions[i]
		fix(&f.Result)
		for j := range f.Params {
			fix(&f.Params[j].Type)
		}
	}
}
