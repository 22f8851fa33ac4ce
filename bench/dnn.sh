#!/usr/bin/env bash
# Runs on the GPU machine: cuda/dnn's convolution forward against torch's
# conv2d on the same shapes, types and layouts (bench/dnnbench and
# bench/python/conv.py), and its fused attention against torch's
# scaled_dot_product_attention (bench/python/sdpa.py) where OPS names
# attention (default conv,attention), ROUNDS rounds of each in turn, then
# the medians over the rounds and their ratio (dnnbench -report). Binaries from $BIN
# (default .gpu/bench: dnnbench, built by `make libs-bin`). Needs no
# network. TYPES, SAMPLES, MS, SEARCH change what is timed; OUT keeps
# every RESULT line.
set -uo pipefail
BIN=${BIN:-.gpu/bench}
ROUNDS=${ROUNDS:-3}
TYPES=${TYPES:-f32,tf32,f16,bf16}
OPS=${OPS:-conv,attention}
SAMPLES=${SAMPLES:-15}
MS=${MS:-100}
SEARCH=${SEARCH:-exhaustive}
TORCH_PYTHON=${TORCH_PYTHON:-/opt/torch/.venv/bin/python}
OUT=${OUT:-$(mktemp)}
status=0

benchmark=1
[[ $SEARCH == exhaustive ]] || benchmark=0
for round in $(seq 1 "$ROUNDS"); do
	echo "## round $round: dnnbench"
	"$BIN/dnnbench" -ops "$OPS" -types "$TYPES" -samples "$SAMPLES" -ms "$MS" -search "$SEARCH" | tee -a "$OUT" || status=1
	echo "## round $round: torch"
	if [[ -x $TORCH_PYTHON ]]; then
		if [[ ,$OPS, == *,conv,* ]]; then
			"$TORCH_PYTHON" bench/python/conv.py --types "$TYPES" --samples "$SAMPLES" --ms "$MS" --benchmark "$benchmark" | tee -a "$OUT" || status=1
		fi
		if [[ ,$OPS, == *,attention,* ]]; then
			"$TORCH_PYTHON" bench/python/sdpa.py --types "$TYPES" --samples "$SAMPLES" --ms "$MS" | tee -a "$OUT" || status=1
		fi
	else
		echo "skipped: no $TORCH_PYTHON"
	fi
done
echo "## medians over $ROUNDS rounds ($OUT)"
"$BIN/dnnbench" -report "$OUT" || status=1
exit $status
