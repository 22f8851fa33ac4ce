#!/usr/bin/env bash
# The inference service of examples/inference (Go) and its PyTorch twin,
# bench/python/inference_server.py, under the same loads on one GPU: open
# loop at each of RATES requests per second, closed loop with each of
# CLIENTS clients, from examples/inference/loadgen on the loopback. Prints
# loadgen's RESULT lines, and a CHECK line comparing the two services'
# answers to the same inputs (the same model from the same seed).
#
# Build on the development machine, `make inference-bin` (into .gpu/bench);
# on the GPU machine, from the repository root:
#
#	LD_LIBRARY_PATH=/usr/local/cuda/lib64 bash bench/inference.sh
#
# Settings from the environment: BIN (.gpu/bench), PY
# (/opt/torch/.venv/bin/python), WIDTH, LAYERS, BATCH, WAIT_MS, DURATION
# and WARMUP of each run, RATES, CLIENTS, PY_FLAGS (more flags for the
# Python service). With the defaults the whole takes about three minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-.gpu/bench}
PY=${PY:-/opt/torch/.venv/bin/python}
WIDTH=${WIDTH:-1024}
LAYERS=${LAYERS:-4}
BATCH=${BATCH:-32}
WAIT_MS=${WAIT_MS:-2}
DURATION=${DURATION:-4s}
WARMUP=${WARMUP:-1s}
RATES=${RATES:-500 1000 2000 4000 8000 16000}
CLIENTS=${CLIENTS:-1 4 16 64 256}
GO_ADDR=127.0.0.1:18080
PY_ADDR=127.0.0.1:18081

for f in "$BIN/inference" "$BIN/loadgen"; do
	[ -x "$f" ] || { echo "inference.sh: no $f: run make inference-bin on the development machine" >&2; exit 1; }
done
if command -v nvidia-smi >/dev/null; then
	echo "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
fi
echo "# width $WIDTH, $LAYERS layers, batches of up to $BATCH, wait ${WAIT_MS}ms; runs of $DURATION after $WARMUP"

work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

# loads IMPL URL: the checks, then every load, against one running service.
loads() {
	"$BIN/loadgen" -url "$2" -ready 300s
	"$BIN/loadgen" -impl "$1" -url "$2" -width "$WIDTH" -check "$work/answers" || echo "# $1: the answers differ from the first service's"
	for r in $RATES; do
		"$BIN/loadgen" -impl "$1" -url "$2" -width "$WIDTH" -rate "$r" -duration "$DURATION" -warmup "$WARMUP" || echo "# $1: rate $r failed"
	done
	for c in $CLIENTS; do
		"$BIN/loadgen" -impl "$1" -url "$2" -width "$WIDTH" -clients "$c" -duration "$DURATION" -warmup "$WARMUP" || echo "# $1: $c clients failed"
	done
}

# stop PID: a graceful shutdown, as a deployment would do.
stop() {
	kill -TERM "$1"
	wait "$1" || echo "# the service exited with status $?"
}

"$BIN/inference" -addr "$GO_ADDR" -batch "$BATCH" -wait "${WAIT_MS}ms" -layers "$LAYERS" -width "$WIDTH" &
pids+=($!)
loads go "http://$GO_ADDR"
stop "${pids[0]}"

"$PY" bench/python/inference_server.py --addr "$PY_ADDR" --batch "$BATCH" --wait-ms "$WAIT_MS" --layers "$LAYERS" --width "$WIDTH" ${PY_FLAGS:-} &
pids+=($!)
loads python "http://$PY_ADDR"
stop "${pids[1]}"
exit 0
