#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, in one call of the
# device tool: what `make libs-carry` packed (unpacked into .gpu when
# .gpu/carry/libs.tar.xz is there), then
#   1. the library packages' tests (bench/libtests.sh),
#   2. NVTX's cost per range with no tool attached (cuda/nvtx's
#      benchmarks),
#   3. SpMV/SpMM and getrf/potrf/syevd from C, the raw bindings and the
#      safe packages (gobench -impl sparse, -impl solver),
#   4. convolutions and attention against torch (bench/dnn.sh),
#   5. nvJPEG batch decode against image/jpeg (jpegbench),
#   6. many workers on one GPU (gobench -impl concur),
#   7. the toolkit's headers that the manifest pins for its version
#      (cuda-headers.tgz, for CUDA_HOME here: make headers caches them),
# each within its own limit in seconds (LIMITS, in that order), so that
# one slow stage leaves the others their time. STAGES picks stages (e.g.
# STAGES="1 3"). Everything goes to one file, $OUT/libs.tgz, beside the
# summary this prints. The default limits add up to 570 s, under the
# 600 s of one call; at them, the second round of stage 4 may be cut,
# and its report is then of the first.
set -uo pipefail
OUT=${OUT:?set OUT to the folder the results go to}
read -ra limits <<<"${LIMITS:-100 30 120 120 60 130 10}"
STAGES=${STAGES:-7 1 2 3 4 5 6}
BIN=.gpu/bench
export LD_LIBRARY_PATH=${LIBDIR:-/usr/local/cuda/lib64}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[[ -e .gpu/carry/libs.tar.xz ]] && tar -C .gpu -xJf .gpu/carry/libs.tar.xz
w=$(mktemp -d)
trap 'tar czf "$OUT/libs.tgz" -C "$w" .' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$w/gpu.txt"
limit() { echo "${limits[$1 - 1]:-120}"; }
for stage in $STAGES; do
	t=$(limit "$stage")
	echo "## stage $stage (at most $t s)"
	case $stage in
	1) OUT=$w timeout "$t" bash bench/libtests.sh 2>&1 | grep -v '^    ' | tee "$w/libtests.txt" ;;
	2) (cd cuda/nvtx && timeout "$t" "../../$BIN/nvtx.test" -test.run '^$' -test.bench . -test.count 3) > "$w/nvtx.txt" 2>&1
		grep ^Benchmark "$w/nvtx.txt" ;;
	3) timeout $((t / 3)) "$BIN/gobench" -impl sparse > "$w/sparse.txt" 2>&1
		timeout $((t - t / 3)) "$BIN/gobench" -impl solver > "$w/solver.txt" 2>&1
		grep -hE '^(SPARSE|SOLVER)' "$w/sparse.txt" "$w/solver.txt" | cut -d' ' -f1-4 ;;
	4) OUT=$w/dnn-results.txt ROUNDS=${DNN_ROUNDS:-2} SAMPLES=9 MS=60 timeout "$t" bash bench/dnn.sh > "$w/dnn.txt" 2>&1
		sed '/^## medians/,$d' "$w/dnn.txt" | grep -v '^RESULT' | tail -12
		"$BIN/dnnbench" -report "$w/dnn-results.txt" ;;
	5) timeout "$t" "$BIN/jpegbench" > "$w/jpeg.txt" 2>&1
		grep '^RESULT' "$w/jpeg.txt" ;;
	6) timeout "$t" "$BIN/gobench" -impl concur -concur-ms 200 -blockprofile "$w/block.pprof" bench/kernels/empty.ptx > "$w/concur.txt" 2>&1
		grep '^CONCURSUM' "$w/concur.txt" | grep -v 'impl=c ' | cut -d' ' -f2-6 ;;
	7) cuda=${CUDA_HOME:-/usr/local/cuda}
		v=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$cuda/include/cuda.h")
		v=$((v / 1000)).$((v % 1000 / 10))
		python3 - "$v" >"$w/headers.txt" <<-'PY'
			import json, sys
			for e in json.load(open("headers/versions.json"))["versions"]:
			    if e["version"] == sys.argv[1]:
			        print(e["source"]["path"])
			        for h in e["headers"]:
			            print(h["path"])
		PY
		(cd "$cuda" && timeout "$t" tar czf "$w/cuda-headers.tgz" $(sort -u "$w/headers.txt")) ;;
	esac
done
