#!/usr/bin/env bash
# Runs on the GPU machine: the test binaries `make libs-bin` built into
# $BIN (default .gpu/libs), each from its package's directory (some read
# testdata), with a missing library or GPU a failure
# (GOCUDA_TEST_LIBS=required) and the real driver. Prints each binary's
# summary line and, for a failure, its failing tests; exits non-zero if
# any failed. LIBDIR is where the CUDA libraries are (default
# /usr/local/cuda/lib64), put first on the library search path: each
# library is opened from there by the soname of the binaries' CUDA
# version. OUT keeps every binary's whole output. The tests
# of cuda/gds put their files on ext4 or XFS themselves (or in
# GOCUDA_TEST_GDS_DIR), as cuFile registers none on tmpfs or overlay.
set -uo pipefail
BIN=$(realpath "${BIN:-.gpu/libs}")
LIBDIR=${LIBDIR:-/usr/local/cuda/lib64}
OUT=${OUT:-$(mktemp -d)}
ROOT=$(pwd)
export GOCUDA_TEST_LIBS=required GOCUDA_TEST_DRIVER=real
export LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
status=0
run() { # name, package directory, binary
	local log=$OUT/$1.txt
	(cd "$ROOT/$2" && "$3" -test.v -test.timeout 15m) > "$log" 2>&1
	local rc=$?
	echo "$1: rc=$rc $(grep -E '^(ok|PASS|FAIL)' "$log" | tail -1) ($(grep -c -- '--- PASS' "$log") passed, $(grep -c -- '--- SKIP' "$log") skipped, $(grep -c -- '--- FAIL' "$log") failed)"
	if [[ $rc != 0 ]]; then
		grep -- '--- FAIL' "$log" | head -20
		status=1
	fi
}
for t in "$BIN"/*.race.test; do
	p=$(basename "$t" .race.test)
	run "$p" "cuda/$p" "$t"
done
run libgpu internal/libgputest "$BIN/libgpu.test"
echo "logs in $OUT"
exit $status
