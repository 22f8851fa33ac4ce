#!/usr/bin/env bash
# Runs on the GPU machine: every implementation, ROUNDS times, in a rotating
# order so that drift hits them alike. Binaries come from `make bench-bin`
# (in $BIN, default .gpu/bench). Prints RESULT lines; `go run ./bench/report`
# turns them into the table. The nvrtc entry compiles a kernel from C and
# from Go in one process; it loads the NVRTC library named by
# GOCUDA_LIBNVRTC (without it, the soname of the bindings' version).
set -euo pipefail
BIN=${BIN:-.gpu/bench}
ROUNDS=${ROUNDS:-5}
PTX=bench/kernels/empty.ptx
impls=(c go-raw go-cuda python nvrtc)
run_impl() {
	case $1 in
	c) "$BIN/cbench" "$PTX" ;;
	go-raw) "$BIN/gobench" -impl raw "$PTX" ;;
	go-cuda) "$BIN/gobench" -impl cuda "$PTX" ;;
	python) python3 bench/python/bench.py "$PTX" ;;
	nvrtc) "$BIN/gobench" -impl nvrtc ;;
	esac
}
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
for ((r = 0; r < ROUNDS; r++)); do
	for ((i = 0; i < ${#impls[@]}; i++)); do
		impl=${impls[$(((i + r) % ${#impls[@]}))]}
		run_impl "$impl" | sed "s/^RESULT /RESULT round=$r /" || echo "# $impl failed in round $r"
	done
done
