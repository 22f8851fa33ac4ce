#!/usr/bin/env bash
# Runs where Nsight Systems is installed (a GPU machine with the CUDA
# toolkit; no GPU is needed): profiles examples/nvtx under nsys and checks
# that its ranges reach the report, which proves that a real NVTX tool
# attaches through package cuda/nvtx.
#   - the binary from $BIN (default .gpu/ex.nvtx, which `make gpu-bin`
#     builds); nsys from $NSYS, else the PATH, the toolkit or
#     /opt/nvidia/nsight-systems;
#   - prints the nvtx_sum report and a RESULT line; exits 1 where a range
#     is missing or nsys fails, 2 where there is no nsys or binary.
set -uo pipefail
BIN=${BIN:-.gpu/ex.nvtx}
NSYS=${NSYS:-$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | tail -1)}
if [[ -z $NSYS || ! -x $NSYS ]]; then
	echo "RESULT nvtx skipped: no nsys"
	exit 2
fi
if [[ ! -x $BIN ]]; then
	echo "RESULT nvtx skipped: no $BIN (make gpu-bin)"
	exit 2
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

echo "## $("$NSYS" --version)"
echo "## nsys profile $BIN"
if ! "$NSYS" profile --trace=nvtx --sample=none --cpuctxsw=none --force-overwrite=true \
	-o "$dir/nvtx" "$BIN" -blocks 8 -size 262144 | tee "$dir/out.txt"; then
	echo "RESULT nvtx FAIL: nsys profile failed"
	exit 1
fi
if ! grep -q "profiler attached: true" "$dir/out.txt"; then
	echo "RESULT nvtx FAIL: the program saw no tool attached"
	exit 1
fi

echo "## nsys stats nvtx_sum"
# Older releases call the report nvtxsum.
"$NSYS" stats --report nvtx_sum --format csv "$dir/nvtx.nsys-rep" >"$dir/sum.csv" 2>"$dir/stats.err" ||
	"$NSYS" stats --report nvtxsum --format csv "$dir/nvtx.nsys-rep" >"$dir/sum.csv" 2>>"$dir/stats.err"
cat "$dir/sum.csv"
status=0
for range in run generate "reduce block"; do
	if ! grep -q "$range" "$dir/sum.csv"; then
		echo "missing range: $range"
		status=1
	fi
done
if ((status == 0)); then
	echo "RESULT nvtx ok: the ranges of cuda/nvtx are in the report"
else
	cat "$dir/stats.err"
	echo "RESULT nvtx FAIL: ranges missing from the report"
fi
exit $status
