#!/usr/bin/env bash
# Runs on the GPU machine (two GPUs or more): the NCCL benchmarks (Go and C all-reduce, peer copies).
#   - ncclbench: in-place float32 all-reduce, Go (cuda/nccl) and C (the same
#     ncclAllReduce loop compiled into the binary) interleaved in one
#     process on the same communicators; then peer copies Go against C;
#   - ncclbench-c: the same all-reduce from a C program of its own (built
#     here against /usr/include/nccl.h, -lnccl -lcudart), if gcc can;
#   - torch: torch.distributed all-reduce, one process per GPU.
# Binaries from $BIN (default .gpu/bench: ncclbench, built by the commands
# of the README's GPU section). Needs no network. Prints RESULT lines and
# the tables; MIN_MIB, MAX_MIB, ITERS, ROUNDS change the sizes and counts.
set -uo pipefail
BIN=${BIN:-.gpu/bench}
MIN_MIB=${MIN_MIB:-8}
MAX_MIB=${MAX_MIB:-1024}
ITERS=${ITERS:-20}
ROUNDS=${ROUNDS:-5}
TORCH_PYTHON=${TORCH_PYTHON:-/opt/torch/.venv/bin/python}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
status=0

echo "## nvidia-smi topo -m"
nvidia-smi topo -m 2>/dev/null || true

echo "## ncclbench (Go and C in one process)"
"$BIN/ncclbench" -min-mib "$MIN_MIB" -max-mib "$MAX_MIB" -iters "$ITERS" -rounds "$ROUNDS" || status=1

echo "## ncclbench.c (C program of its own)"
cexe=$(mktemp -d)/ncclbench-c
if gcc -O2 -o "$cexe" bench/c/ncclbench.c -I"$CUDA_HOME/include" -L"$CUDA_HOME/lib64" -lnccl -lcudart 2>"$cexe.log"; then
	LD_LIBRARY_PATH="$CUDA_HOME/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$cexe" "$MIN_MIB" "$MAX_MIB" "$ITERS" || status=1
else
	echo "skipped: gcc could not build it:"; cat "$cexe.log"
fi

echo "## torch.distributed (one process per GPU)"
if [[ -x $TORCH_PYTHON ]]; then
	"$TORCH_PYTHON" bench/python/allreduce.py --min-mib "$MIN_MIB" --max-mib "$MAX_MIB" --iters "$ITERS" --rounds "$ROUNDS" || status=1
else
	echo "skipped: no $TORCH_PYTHON"
fi
exit $status
