"""torch.matmul on the shapes of bench/tune (bfloat16, C = A @ W.T), timed
with CUDA events: median per multiply of 30 samples, each a batch as in
bench/tune. By default, as bench/tune does, a sample is one replay of a
CUDA graph holding the batch (--no-graph: the batch enqueued call by call,
as earlier runs did). Prints RESULT lines like bench/tune's, which reads
them with -torch.

    /opt/torch/.venv/bin/python bench/python/tune.py [--no-graph] > torch.txt
"""
import statistics
import sys

import torch

SHAPES = [
    (1, 4096, 4096), (1, 4096, 14336), (1, 14336, 4096), (1, 8192, 8192),
    (4, 4096, 4096), (4, 4096, 14336), (8, 4096, 4096), (8, 8192, 28672),
    (16, 4096, 4096), (16, 4096, 14336), (16, 14336, 4096), (16, 8192, 8192),
    (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096),
]


def main():
    graph = "--no-graph" not in sys.argv[1:]
    dev = torch.device("cuda")
    print(f"# torch {torch.__version__}, {torch.cuda.get_device_name(dev)}, bfloat16, graph={graph}")
    for m, k, n in SHAPES:
        a = torch.ones((m, k), dtype=torch.bfloat16, device=dev)
        w = torch.ones((n, k), dtype=torch.bfloat16, device=dev)
        c = torch.empty((m, n), dtype=torch.bfloat16, device=dev)
        batch = min(50, max(1, int(2e9 / (2 * m * k * n))))

        def work():
            for _ in range(batch):
                torch.matmul(a, w.T, out=c)

        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                work()
        torch.cuda.current_stream().wait_stream(side)
        run = work
        if graph:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                work()
            g.replay()
            run = g.replay
        times = []
        for _ in range(30):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            run()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e3 / batch)
        us = statistics.median(times)
        tflops = 2 * m * k * n / (us * 1e-6) / 1e12
        print(f"RESULT impl=torch op=gemm_bf16_m{m}_k{k}_n{n} value={us:.3f} unit=us tflops={tflops:.1f} graph={graph}")


if __name__ == "__main__":
    main()
