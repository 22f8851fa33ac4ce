# The one place that knows the project's command lines; README and .ci/run call these targets.

GO          ?= go
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Build tags of the CUDA version matrix, read from the manifest.
TAGS        := $(shell sed -n 's/.*"tag": *"\(cuda[0-9]*\)".*/\1/p' headers/versions.json)
# Build tags of the NCCL versions (the newest builds without one), read from the manifest.
NCCL_VERSION_TAGS := $(shell sed -n 's/.*"tag": *"\(nccl[0-9]*\)".*/\1/p' headers/versions.json)
# A build without a tag compiles the manifest's default CUDA version and the
# newest NCCL: the same code as with their tags. The checks that run once
# without a tag skip those tags (OTHER_TAGS, OTHER_NCCL_TAGS) rather than
# build and test the same code twice.
DEFAULT_TAG := $(shell awk -F'"' '$$2 == "default" { split($$4, v, "."); printf "cuda%d%03d", v[1], v[2] * 10 }' headers/versions.json)
OTHER_TAGS  := $(filter-out $(DEFAULT_TAG),$(TAGS))
OTHER_NCCL_TAGS := $(filter-out $(lastword $(NCCL_VERSION_TAGS)),$(NCCL_VERSION_TAGS))
# The newest version and the oldest, besides the default: the versions
# between differ from them only in bindings that vet and the per-tag tests
# (unit) cover. Staticcheck and the arm64 vet run for these. The race runs
# take the default and the newest: the oldest's own code (the _cuda11
# files) runs in its plain per-tag tests.
EDGE_TAGS   := $(firstword $(OTHER_TAGS)) $(lastword $(OTHER_TAGS))
RACE_TAGS   := $(lastword $(OTHER_TAGS))
# Packages whose tests no CUDA version changes beyond the bindings that the
# default run already exercises: the per-tag runs leave them out. The PTX
# suite runs the interpreter, which knows no CUDA version.
PER_TAG_PKGS = $(shell $(GO) list ./generated/... ./cuda/... ./internal/fakecuda/... | grep -v '/cuda/cudatest/ptxsuite$$')
RACE_PKGS    = $(shell $(GO) list ./cuda/... ./internal/fakecuda/... | grep -v '/cuda/cudatest/ptxsuite$$')
# Tests whose code no version tag changes (the layering of package cuda,
# the completions' and the race detector's long runs): the runs of the
# other tags skip them. The layering check reads source, not run-time
# behaviour: the plain run of every package checks it, the race and
# cgocheck2 runs skip it.
TAG_INDEPENDENT := TestLayers|TestBlockedThenHoldsBackOnlyItsStream|TestUnwaitedCompletionUnderSeeds
# Where GPU test binaries are built, to be carried to the GPU machine.
GPU_BIN     ?= .gpu

.PHONY: all headers generate api-diff check check-generated tidy fmt vet staticcheck unit test-race test-cgocheck2 fuzz cross-arm64 test gpu-bin nccl-bin libs-bin libs-carry bench-bin inference-bin bench-report

all: generate test

## headers: fetch and verify every header of the matrix into the cache (Debian packages; a toolkit at $CUDA_HOME; a file at a fixed path, e.g. the cuda.h Triton bundles); V=1 prints each version and where its header was looked for
headers:
	$(GO) run ./headers/fetch $(if $(V),-v)

## generate: fetch headers, then regenerate generated/ for every version whose headers are cached, one line per version and a summary (V=1: each header, and where it was looked for); a version not cached keeps its committed files
generate: headers
	$(GO) run ./gen -all $(if $(V),-v)

## api-diff: the API changes between two versions of the matrix (make api-diff FROM=12.4 TO=13.0)
api-diff:
	$(GO) run ./gen -diff $(FROM) $(TO)

## check: the quick loop while changing code: gofmt, vet and the short tests, default version only (make test is the full run)
check: fmt
	$(GO) vet ./...
	$(GO) test -short ./...

## check-generated: regenerate in memory and fail on any difference from what is committed (API_CHANGES.md included)
check-generated: headers
	$(GO) run ./gen -all -check

## tidy: fail if go.mod or go.sum is not what go mod tidy makes
tidy:
	$(GO) mod tidy -diff

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "not gofmt-clean:"; echo "$$out"; exit 1; fi

## vet: go vet for every version tag (and no tag)
vet:
	$(GO) vet ./...
	@set -e; for t in $(OTHER_TAGS); do echo "go vet -tags $$t ./..."; $(GO) vet -tags $$t ./...; done
	@set -e; for t in $(OTHER_NCCL_TAGS); do echo "go vet -tags $$t ./generated/nccl ./cuda/nccl"; $(GO) vet -tags $$t ./generated/nccl ./cuda/nccl; done

## staticcheck: for the default version, the oldest and the newest (vet covers every tag)
staticcheck:
	@set -e; for t in $(DEFAULT_TAG) $(EDGE_TAGS); do echo "staticcheck -tags $$t ./..."; $(STATICCHECK) -tags $$t ./...; done
	@set -e; for t in $(OTHER_NCCL_TAGS); do echo "staticcheck -tags $$t ./generated/nccl ./cuda/nccl"; $(STATICCHECK) -tags $$t ./generated/nccl ./cuda/nccl; done

## unit: all tests, for every version tag; without libcuda the cuda tests run against the fake driver (internal/fakecuda)
unit:
	$(GO) test ./...
	@set -e; for t in $(OTHER_TAGS); do echo "go test -tags $$t -skip '$(TAG_INDEPENDENT)' ./generated/... ./cuda/... ./internal/fakecuda/... (not the PTX suite)"; $(GO) test -tags $$t -skip '$(TAG_INDEPENDENT)' $(PER_TAG_PKGS); done
	@set -e; for t in $(OTHER_NCCL_TAGS); do echo "go test -tags $$t ./generated/nccl ./cuda/nccl"; $(GO) test -tags $$t ./generated/nccl ./cuda/nccl; done

## test-race: the cuda tests under the race detector, for the default and the newest CUDA versions (and every NCCL version for its package)
test-race:
	$(GO) test -race -skip TestLayers ./cuda/... ./internal/fakecuda/...
	@set -e; for t in $(RACE_TAGS); do echo "go test -race -tags $$t -skip '$(TAG_INDEPENDENT)' ./cuda/... ./internal/fakecuda/... (not the PTX suite)"; $(GO) test -race -tags $$t -skip '$(TAG_INDEPENDENT)' $(RACE_PKGS); done
	@set -e; for t in $(OTHER_NCCL_TAGS); do echo "go test -race -tags $$t ./cuda/nccl"; $(GO) test -race -tags $$t ./cuda/nccl; done

## test-cgocheck2: the packages that hand memory to C, with cgo's full pointer checks
test-cgocheck2:
	GOEXPERIMENT=cgocheck2 $(GO) test -skip TestLayers ./generated/cu ./generated/nvrtc ./generated/nvjitlink ./cuda/...

FUZZTIME ?= 20s
## fuzz: feed the generator mutated headers, and the PTX interpreter mutated PTX, for $(FUZZTIME) each
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzModel -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./gen
	$(GO) test -run '^$$' -fuzz FuzzPTX -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./internal/ptx

## cross-arm64: build and vet every package for linux/arm64, cgo included, and for the oldest and newest tags the packages whose code the tag changes (cross compiler: Debian's gcc-aarch64-linux-gnu; gen's tests check the layouts with it)
ARM64_CC ?= aarch64-linux-gnu-gcc
cross-arm64:
	CGO_ENABLED=1 GOARCH=arm64 CC=$(ARM64_CC) $(GO) vet ./...
	@set -e; for t in $(EDGE_TAGS); do echo "GOARCH=arm64 go vet -tags $$t ./generated/... ./cuda/..."; CGO_ENABLED=1 GOARCH=arm64 CC=$(ARM64_CC) $(GO) vet -tags $$t ./generated/... ./cuda/...; done
	CGO_ENABLED=1 GOARCH=arm64 CC=$(ARM64_CC) $(GO) build ./...

## test: everything CI runs: format, go mod tidy, headers (so the layout tests run), vet and staticcheck per tag, tests per tag (cuda/ against the fake driver without a GPU), race, cgocheck2, a bounded fuzz of the generator, regenerate-and-diff, the arm64 cross-build
test: fmt tidy headers vet staticcheck unit test-race test-cgocheck2 fuzz check-generated cross-arm64

## gpu-bin: build test binaries for the GPU machine into $(GPU_BIN)/ (ignored by git, carried by the device tool)
gpu-bin:
	mkdir -p $(GPU_BIN)
	@set -e; for t in $(TAGS); do \
		$(GO) test -c -tags $$t -o $(GPU_BIN)/cu.$$t.test ./generated/cu; \
		$(GO) build -tags $$t -o $(GPU_BIN)/smoke.$$t ./cmd/cusmoke; \
		$(GO) test -c -race -tags $$t -o $(GPU_BIN)/cuda.$$t.race.test ./cuda; \
		$(GO) test -c -tags $$t -o $(GPU_BIN)/nvrtc.$$t.test ./cuda/nvrtc; \
	done
	GOEXPERIMENT=cgocheck2 $(GO) test -c -o $(GPU_BIN)/cuda.cgocheck2.test ./cuda
	$(GO) build -o $(GPU_BIN)/cudainfo ./cmd/cudainfo
	@set -e; for e in vectoradd sharedstream graph matmul nvtx linsolve; do $(GO) build -o $(GPU_BIN)/ex.$$e ./examples/$$e; done
	@set -e; for t in $(TAGS); do $(GO) test -c -tags $$t -o $(GPU_BIN)/libgpu.$$t.test ./internal/libgputest; for p in blas rand fft; do $(GO) test -c -race -tags $$t -o $(GPU_BIN)/$$p.$$t.race.test ./cuda/$$p; done; done
	$(GO) build -o $(GPU_BIN)/gen ./gen
	$(GO) build -o $(GPU_BIN)/fetch ./headers/fetch

## nccl-bin: the NCCL tests, examples and benchmark for a machine with two GPUs or more into $(GPU_BIN)/ (NCCL_TAGS: the CUDA version of its driver's toolkit); there, GOCUDA_TEST_LIBS=required ./nccl.test -test.v, and bash bench/nccl.sh for the benchmarks
NCCL_TAGS ?= cuda13000
nccl-bin:
	mkdir -p $(GPU_BIN)/bench
	$(GO) test -c -tags "$(NCCL_TAGS)" -o $(GPU_BIN)/nccl.test ./cuda/nccl
	$(GO) test -c -race -tags "$(NCCL_TAGS)" -o $(GPU_BIN)/nccl.race.test ./cuda/nccl
	$(GO) test -c -tags "$(NCCL_TAGS)" -o $(GPU_BIN)/rawnccl.test ./generated/nccl
	$(GO) test -c -tags "$(NCCL_TAGS)" -o $(GPU_BIN)/cuda.nccl.test ./cuda
	$(GO) build -tags "$(NCCL_TAGS)" -o $(GPU_BIN)/ex.allreduce ./examples/allreduce
	$(GO) build -tags "$(NCCL_TAGS)" -o $(GPU_BIN)/ex.allreduce2p ./examples/allreduce2p
	$(GO) build -tags "$(NCCL_TAGS)" -o $(GPU_BIN)/bench/ncclbench ./bench/ncclbench

## libs-bin: the tests of the library packages (cuda/sparse, solver, dnn, jpeg, gds, nvtx, the raw libraries' own in internal/libgputest; race-built) and the cuDNN and nvJPEG benchmarks into $(GPU_BIN)/libs (LIBS_TAGS: the CUDA version of the GPU machine's toolkit); there, bash bench/libtests.sh runs every test binary from its package's directory and prints each one's summary line, and bash bench/dnn.sh compares the convolutions with torch
LIBS_TAGS ?= cuda13000
LIBS_PKGS := sparse solver dnn jpeg gds nvtx
libs-bin:
	mkdir -p $(GPU_BIN)/libs $(GPU_BIN)/bench
	@set -e; for p in $(LIBS_PKGS); do echo "go test -c -race ./cuda/$$p"; $(GO) test -c -race -ldflags=-s -tags "$(LIBS_TAGS)" -o $(GPU_BIN)/libs/$$p.race.test ./cuda/$$p; done
	$(GO) test -c -ldflags=-s -tags "$(LIBS_TAGS)" -o $(GPU_BIN)/libs/libgpu.test ./internal/libgputest
	$(GO) build -ldflags=-s -tags "$(LIBS_TAGS)" -o $(GPU_BIN)/bench/dnnbench ./bench/dnnbench
	$(GO) build -ldflags=-s -tags "$(LIBS_TAGS)" -o $(GPU_BIN)/bench/jpegbench ./bench/jpegbench

## libs-carry: libs-bin, bench-bin (for LIBS_TAGS) and a plain-built cuda/nvtx test binary (its benchmarks), packed into $(GPU_BIN)/carry/libs.tar.xz, small enough for the device tool to carry at once; there, bash bench/libs.sh unpacks it and runs the tests and every library and concurrency benchmark in one call, each within its own time limit
libs-carry: libs-bin
	$(MAKE) bench-bin BENCH_TAGS="$(LIBS_TAGS)"
	$(GO) test -c -ldflags=-s -tags "$(LIBS_TAGS)" -o $(GPU_BIN)/bench/nvtx.test ./cuda/nvtx
	mkdir -p $(GPU_BIN)/carry
	tar -C $(GPU_BIN) -cf - libs bench | xz -T0 -6 > $(GPU_BIN)/carry/libs.tar.xz

## bench-bin: build the benchmark programs into $(GPU_BIN)/bench; on the GPU machine, `GOCUDA_LIBNVRTC=<libnvrtc> bash bench/run.sh > results.txt` (the NVRTC entry needs the library). BENCH_TAGS picks the bindings' version of gobench (e.g. cuda13000, for the libraries of a CUDA 13 toolkit: the GEMM entries load the version's libcublas)
BENCH_TAGS ?=
bench-bin:
	mkdir -p $(GPU_BIN)/bench
	$(CC) -O2 -Wall -o $(GPU_BIN)/bench/cbench bench/c/bench.c -ldl
	$(GO) build -tags "$(BENCH_TAGS)" -o $(GPU_BIN)/bench/gobench ./bench/gobench
	$(GO) build -tags "$(BENCH_TAGS)" -o $(GPU_BIN)/bench/jpegbench ./bench/jpegbench

## inference-bin: the inference service of examples/inference, its load generator and its test binary into $(GPU_BIN)/bench (INFERENCE_TAGS: the bindings' CUDA version, that of the GPU machine's toolkit); there, `LD_LIBRARY_PATH=/usr/local/cuda/lib64 bash bench/inference.sh` compares it with bench/python/inference_server.py, and `GOCUDA_TEST_DRIVER=real GOCUDA_TEST_NVRTC=required $(GPU_BIN)/bench/inference.test -test.v` checks it against the CPU
INFERENCE_TAGS ?= cuda13000
inference-bin:
	mkdir -p $(GPU_BIN)/bench
	$(GO) build -tags "$(INFERENCE_TAGS)" -o $(GPU_BIN)/bench/inference ./examples/inference
	$(GO) build -o $(GPU_BIN)/bench/loadgen ./examples/inference/loadgen
	$(GO) test -c -tags "$(INFERENCE_TAGS)" -o $(GPU_BIN)/bench/inference.test ./examples/inference

## bench-report: the table of a run's results (RESULTS=file)
bench-report:
	$(GO) run ./bench/report < $(RESULTS)
