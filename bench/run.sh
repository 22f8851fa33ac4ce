#!/usr/bin/env bash
# Runs on the GPU machine: every implementation, ROUNDS times, in a rotating
# order so that drift hits them alike. Binaries come from `make bench-bin`
# (in $BIN, default .gpu/bench). Prints RESULT lines; `go run ./bench/report`
# turns them into the table. The nvrtc entry compiles a kernel from C and
# from Go in one process; it loads the NVRTC library named by
# GOCUDA_LIBNVRTC (without it, the soname of the bindings' version).
# GEMM=1 (the default; GEMM=0 leaves them out) adds two entries: gemm,
# cuBLAS GEMMs from C and from Go in one process (gobench -impl gemm: its
# cuBLAS is the soname of the bindings' version, so build gobench for the
# machine's toolkit, e.g. BENCH_TAGS=cuda13000, and put the library on
# LD_LIBRARY_PATH or in GOCUDA_LIBCUBLAS), and torch-gemm, torch.matmul on
# the same GEMMs (bench/python/gemm.py under $TORCH_PYTHON). GEMM_SIZES,
# GEMM_TYPES (of f32, tf32, bf16, bf16lt, fp8: all by default; bf16lt and
# fp8 are cuBLASLt from C and from Go, and need libcublasLt too),
# GEMM_SAMPLES and GEMM_MS, when set, go to both. IMPLS, when
# set, replaces the list of entries (e.g. IMPLS="gemm torch-gemm"). The
# entry solver, in no default list, times cuSOLVER's getrf, potrf and
# syevd from C and from Go in one process (gobench -impl solver; its
# cuSOLVER is found as cuBLAS is, or in GOCUDA_LIBCUSOLVER). The entry
# sparse, also in no default list, times cuSPARSE's SpMV and SpMM from C,
# the raw bindings and cuda/sparse (gobench -impl sparse, its library
# found as gemm's is).
set -euo pipefail
BIN=${BIN:-.gpu/bench}
ROUNDS=${ROUNDS:-5}
PTX=bench/kernels/empty.ptx
GEMM=${GEMM:-1}
TORCH_PYTHON=${TORCH_PYTHON:-/opt/torch/.venv/bin/python}
impls=(c go-raw go-cuda python nvrtc)
if [[ $GEMM == 1 ]]; then
	impls+=(gemm torch-gemm)
fi
if [[ -n ${IMPLS:-} ]]; then
	read -ra impls <<<"$IMPLS"
fi
gemm_flags=()
torch_flags=()
for v in sizes types samples ms; do
	name=GEMM_${v^^}
	if [[ -n ${!name:-} ]]; then
		gemm_flags+=("-gemm-$v=${!name}")
		torch_flags+=("--$v=${!name}")
	fi
done
run_impl() {
	case $1 in
	c) "$BIN/cbench" "$PTX" ;;
	go-raw) "$BIN/gobench" -impl raw "$PTX" ;;
	go-cuda) "$BIN/gobench" -impl cuda "$PTX" ;;
	python) python3 bench/python/bench.py "$PTX" ;;
	nvrtc) "$BIN/gobench" -impl nvrtc ;;
	gemm) "$BIN/gobench" -impl gemm ${gemm_flags[@]+"${gemm_flags[@]}"} ;;
	solver) "$BIN/gobench" -impl solver ;;
	torch-gemm) "$TORCH_PYTHON" bench/python/gemm.py ${torch_flags[@]+"${torch_flags[@]}"} ;;
	sparse) "$BIN/gobench" -impl sparse ;;
	esac
}
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
for ((r = 0; r < ROUNDS; r++)); do
	for ((i = 0; i < ${#impls[@]}; i++)); do
		impl=${impls[$(((i + r) % ${#impls[@]}))]}
		run_impl "$impl" | sed "s/^RESULT /RESULT round=$r /" || echo "# $impl failed in round $r"
	done
done
