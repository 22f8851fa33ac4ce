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
#
# torch calls the cuDNN its wheel bundles, often newer than the system's.
# So that both sides run one cuDNN, dnnbench loads that one too where it
# exists (GOCUDA_LIBCUDNN, with its directory first on LD_LIBRARY_PATH so
# that its sub-libraries come from the same release); TORCH_CUDNN=system
# keeps the system's, and a GOCUDA_LIBCUDNN already set wins. Each side's
# INFO line prints the version it loaded.
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
TORCH_CUDNN=${TORCH_CUDNN:-bundled}
status=0

if [[ -z ${GOCUDA_LIBCUDNN:-} && $TORCH_CUDNN != system && -x $TORCH_PYTHON ]]; then
	# nvidia.cudnn is a namespace package: its __path__, not __file__.
	lib=$("$TORCH_PYTHON" -c 'import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], "lib"))' 2>/dev/null)
	if [[ -z $lib ]]; then
		for d in "$(dirname "$TORCH_PYTHON")"/../lib/python3*/site-packages/nvidia/cudnn/lib; do
			[[ -f $d/libcudnn.so.9 ]] && lib=$(cd "$d" && pwd)
		done
	fi
	if [[ -n $lib && -f $lib/libcudnn.so.9 ]]; then
		export GOCUDA_LIBCUDNN=$lib/libcudnn.so.9
		export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	fi
fi
echo "## dnnbench's cuDNN: ${GOCUDA_LIBCUDNN:-libcudnn.so.9 from the library search path}"

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
