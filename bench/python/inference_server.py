"""The inference service of examples/inference in PyTorch, for comparison.

The same protocol (POST /infer: width little-endian float32s in, as many
out; GET /healthz; GET /stats), the same model (bfloat16 layers
h = GELU(x·W1 + b1), y = h·W2 + b2, x = layernorm(x + y)·γ + β, with the
weights hashed from the same seed as weights.go does, so both answer alike
within bfloat16's rounding) and the same batching policy: a batch leaves
when it has --batch requests or --wait-ms after its first request arrived,
and requests that queued meanwhile join at once. On a GPU each batch size
has its CUDA graph (torch.cuda.CUDAGraph), captured at start-up.

    /opt/torch/.venv/bin/python bench/python/inference_server.py [--addr 127.0.0.1:8081] [--batch 32] [--wait-ms 2] [--layers 4] [--width 1024]

Only the standard library and torch. --device cpu runs it without a GPU
(no graphs), to try the service out.
"""

import argparse
import ctypes
import json
import math
import queue
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import torch
import torch.nn.functional as F

EPS = 1e-5
M32 = 0xFFFFFFFF


def hashed(n, tensor, seed, scale, offset=0.0):
    """weights.go's hashed: the same bits, in int64 tensor arithmetic
    (every product stays below 2**63)."""
    h = (torch.arange(n, dtype=torch.int64) * 0x9E3779B1 + tensor * 0x85EBCA77 + seed) & M32
    h ^= h >> 16
    h = (h * 0x7FEB352D) & M32
    h ^= h >> 15
    h = (h * 0x5BD1E995) & M32
    h ^= h >> 16
    u = (h >> 8).to(torch.float32) * (1.0 / (1 << 24))
    return (u * 2 - 1) * torch.tensor(scale, dtype=torch.float32) + offset


class Model:
    def __init__(self, d, layers, max_batch, seed, device):
        bf = torch.bfloat16
        self.d, self.max_batch, self.device = d, max_batch, torch.device(device)
        s1, s2 = 1 / math.sqrt(d), 1 / math.sqrt(4 * d)
        self.layers = []
        for l in range(layers):
            t = 6 * l
            self.layers.append(tuple(w.to(self.device) for w in (
                hashed(d * 4 * d, t, seed, s1).view(d, 4 * d).to(bf),
                hashed(4 * d, t + 1, seed, 0.1).to(bf),
                hashed(4 * d * d, t + 2, seed, s2).view(4 * d, d).to(bf),
                hashed(d, t + 3, seed, 0.1).to(bf),
                hashed(d, t + 4, seed, 0.1, 1.0),
                hashed(d, t + 5, seed, 0.1),
            )))
        cuda = self.device.type == "cuda"
        # The graphs read and write these; the pinned host rows are copied
        # in and out around each replay.
        self.x_in = torch.zeros(max_batch, d, device=self.device)
        self.y_out = torch.zeros(max_batch, d, device=self.device)
        self.h_in = torch.zeros(max_batch, d, pin_memory=cuda)
        self.h_out = torch.zeros(max_batch, d, pin_memory=cuda)
        self.graphs = {}
        # cuBLASLt's bias+GELU epilogue, as the Go service uses, where
        # torch has it; elsewhere the same tanh GELU after the multiply.
        self.fused = cuda and hasattr(torch, "_addmm_activation")

    def forward(self, x):
        x = x.to(torch.bfloat16)
        for w1, b1, w2, b2, gamma, beta in self.layers:
            if self.fused:
                h = torch._addmm_activation(b1, x, w1, use_gelu=True)
            else:
                h = F.gelu(torch.addmm(b1, x, w1), approximate="tanh")
            y = torch.addmm(b2, h, w2)
            x = F.layer_norm(x.float() + y.float(), (self.d,), gamma, beta, EPS).to(torch.bfloat16)
        return x.float()

    def _step(self, n):
        self.y_out[:n].copy_(self.forward(self.x_in[:n]))

    def capture(self):
        """One CUDA graph per batch size, sharing one memory pool."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up: cuBLAS handles and workspaces
            for n in range(1, self.max_batch + 1):
                self._step(n)
        torch.cuda.current_stream().wait_stream(side)
        pool = None
        for n in range(self.max_batch, 0, -1):
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, pool=pool):
                self._step(n)
            pool = g.pool()
            self.graphs[n] = g
        torch.cuda.synchronize()

    def run(self, bodies):
        """The outputs of a batch of request bodies, as bytes."""
        n, row = len(bodies), 4 * self.d
        base = self.h_in.data_ptr()
        for i, b in enumerate(bodies):
            ctypes.memmove(base + i * row, b, row)
        self.x_in[:n].copy_(self.h_in[:n], non_blocking=True)
        if n in self.graphs:
            self.graphs[n].replay()
        else:
            self._step(n)
        self.h_out[:n].copy_(self.y_out[:n], non_blocking=True)
        if self.device.type == "cuda":
            torch.cuda.current_stream().synchronize()
        out = self.h_out.data_ptr()
        return [ctypes.string_at(out + i * row, row) for i in range(n)]


class Request:
    __slots__ = ("body", "arrived", "done", "out", "err")

    def __init__(self, body):
        self.body, self.arrived, self.done = body, time.monotonic(), threading.Event()
        self.out = self.err = None


class Batcher:
    """examples/inference/batcher.go's policy."""

    def __init__(self, max_batch, wait, run):
        self.max, self.wait, self.run = max_batch, wait, run
        self.queue = queue.Queue()
        self.batches = self.handled = 0
        self.stopping = threading.Event()

    def next(self):
        try:
            first = self.queue.get(timeout=0.1)
        except queue.Empty:
            return None
        batch, deadline = [first], first.arrived + self.wait
        while len(batch) < self.max:
            try:  # those already queued join first, deadline or not
                batch.append(self.queue.get_nowait())
                continue
            except queue.Empty:
                pass
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                batch.append(self.queue.get(timeout=left))
            except queue.Empty:
                break
        return batch

    def loop(self):
        while not self.stopping.is_set():
            batch = self.next()
            if not batch:
                continue
            try:
                outs, err = self.run([r.body for r in batch]), None
            except Exception as e:  # every request of the batch gets the error
                outs, err = [None] * len(batch), e
            self.batches += 1
            self.handled += len(batch)
            for r, o in zip(batch, outs):
                r.out, r.err = o, err
                r.done.set()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the Go service
    disable_nagle_algorithm = True  # headers and body are two writes

    def log_message(self, *args):
        pass

    def send(self, code, body, ctype="text/plain"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        b = self.server.batcher
        if self.path == "/healthz":
            self.send(200, b"ok\n")
        elif self.path == "/stats":
            self.send(200, json.dumps({"requests": b.handled, "batches": b.batches}).encode() + b"\n", "application/json")
        else:
            self.send(404, b"not found\n")

    def do_POST(self):
        srv = self.server
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path != "/infer":
            return self.send(404, b"not found\n")
        if len(body) != 4 * srv.width:
            return self.send(400, b"want a body of %d little-endian float32s\n" % srv.width)
        with srv.lock:
            srv.inflight += 1
        try:
            r = Request(body)
            srv.batcher.queue.put(r)
            r.done.wait()
            if r.err is not None:
                self.send(503, str(r.err).encode() + b"\n")
            else:
                self.send(200, r.out, "application/octet-stream")
        finally:
            with srv.lock:
                srv.inflight -= 1


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # the load generator opens hundreds of connections at once
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # A client that goes away (the load generator, at the end of a
        # run) is no error of the service's.
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--addr", default="127.0.0.1:8081")
    ap.add_argument("--batch", type=int, default=32, help="largest batch")
    ap.add_argument("--wait-ms", type=float, default=2.0, help="longest a batch waits for more requests after its first")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--width", type=int, default=1024, help="floats per request")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--no-graphs", action="store_true", help="run each batch eagerly")
    a = ap.parse_args()

    start = time.monotonic()
    if a.device.startswith("cuda"):
        # The Go service's multiplies accumulate in float32 throughout.
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    model = Model(a.width, a.layers, a.batch, a.seed, a.device)
    if model.device.type == "cuda" and not a.no_graphs:
        try:
            model.capture()
        except RuntimeError as e:  # still a service to compare, said so
            model.graphs = {}
            print("inference_server: no CUDA graphs, batches run eagerly:", e, file=sys.stderr, flush=True)
    batcher = Batcher(a.batch, a.wait_ms / 1000, model.run)
    worker = threading.Thread(target=batcher.loop, daemon=True)
    worker.start()

    host, port = a.addr.rsplit(":", 1)
    srv = Server((host, int(port)), Handler)
    srv.batcher, srv.width, srv.lock, srv.inflight = batcher, a.width, threading.Lock(), 0

    def stop(signum, frame):
        threading.Thread(target=srv.shutdown).start()

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    print("inference_server: width %d, %d layers, batches of up to %d (wait %gms), %s%s, torch %s, ready in %.1fs; listening on %s"
          % (a.width, a.layers, a.batch, a.wait_ms, model.device, " with graphs" if model.graphs else "",
             torch.__version__, time.monotonic() - start, a.addr), file=sys.stderr, flush=True)
    srv.serve_forever()
    # No new requests; those in flight get their answers before the
    # batcher stops.
    end = time.monotonic() + 10
    while srv.inflight > 0 and time.monotonic() < end:
        time.sleep(0.01)
    batcher.stopping.set()
    worker.join()
    srv.server_close()
    print("inference_server: shut down after %d requests in %d batches" % (batcher.handled, batcher.batches),
          file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
