"""torch.matmul on the shapes of bench/tune (bfloat16, C = A @ W.T), timed
with CUDA events: median per multiply of 30 samples, each a batch as in
bench/tune. Prints RESULT lines like bench/tune's.

    /opt/torch/.venv/bin/python bench/python/tune.py
"""
import statistics

import torch

SHAPES = [
    (1, 4096, 4096), (1, 4096, 14336), (1, 14336, 4096), (1, 8192, 8192),
    (4, 4096, 4096), (4, 4096, 14336), (8, 4096, 4096), (8, 8192, 28672),
    (16, 4096, 4096), (16, 4096, 14336), (16, 14336, 4096), (16, 8192, 8192),
    (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096),
]


def main():
    dev = torch.device("cuda")
    print(f"# torch {torch.__version__}, {torch.cuda.get_device_name(dev)}, bfloat16")
    for m, k, n in SHAPES:
        a = torch.ones((m, k), dtype=torch.bfloat16, device=dev)
        w = torch.ones((n, k), dtype=torch.bfloat16, device=dev)
        batch = min(50, max(1, int(2e9 / (2 * m * k * n))))
        for _ in range(3):
            torch.matmul(a, w.T)
        times = []
        for _ in range(30):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(batch):
                torch.matmul(a, w.T)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e3 / batch)
        us = statistics.median(times)
        tflops = 2 * m * k * n / (us * 1e-6) / 1e12
        print(f"RESULT impl=torch op=gemm_bf16_m{m}_k{k}_n{n} value={us:.3f} unit=us tflops={tflops:.1f}")


if __name__ == "__main__":
    main()
