"""torch.matmul on the GEMMs of `gobench -impl gemm`, timed the same way.

    /opt/torch/.venv/bin/python bench/python/gemm.py [--sizes 4096,8192]
        [--types f32,tf32,bf16,bf16lt,fp8] [--samples 15] [--ms 200]

Per case (M=N=K=size): f32 is float32 with
torch.backends.cuda.matmul.allow_tf32 off, tf32 the same with it on, bf16
is bfloat16 A, B and C (cuBLAS accumulates in float32). A and B are
uniform in [-1, 1), C = A @ B into a preallocated output (out=). bf16lt is
the same torch.matmul as bf16 (torch picks its own cuBLAS call; gobench's
bf16lt row compares cuBLASLt from C and Go, and this gives it a torch
column). fp8 is torch._scaled_mm: float8_e4m3fn A (row-major M×K) and B =
W.t() (W row-major N×K, so B is column-major, as _scaled_mm and cuBLASLt's
FP8 want), scales of 1.0, a bfloat16 C, use_fast_accum off (cuBLASLt's
default, which gobench keeps); A and W are integers in [-8, 8], as in
gobench, so that the check is exact up to C's rounding. On one
stream of its own: a warm-up, a probe that sets n, the GEMMs per sample,
so that a sample takes about --ms of GPU time, then --samples samples of
n back-to-back matmuls between two CUDA events. Prints, per case, the
median as

    RESULT impl=torch op=gemm_<type>_<size> value=V unit=TFLOP/s

and INFO lines (torch's version, its CUDA and BLAS library) that
bench/report ignores. torch calls the cuBLAS it ships with, which may be
another version than the one gobench loads: the INFO line says which.
"""
import argparse
import math
import statistics

import torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="4096,8192")
    p.add_argument("--types", default="f32,tf32,bf16,bf16lt,fp8")
    p.add_argument("--samples", type=int, default=15)
    p.add_argument("--ms", type=float, default=200.0)
    args = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("gemm.py: no CUDA device visible to torch")
    sizes = [int(s) for s in args.sizes.split(",")]
    kinds = [k.strip() for k in args.types.split(",")]
    for k in kinds:
        if k not in ("f32", "tf32", "bf16", "bf16lt", "fp8"):
            raise SystemExit(f"gemm.py: unknown type {k!r} (f32, tf32, bf16, bf16lt, fp8)")

    dev = torch.device("cuda", 0)
    blas = getattr(torch.backends.cuda, "preferred_blas_library", lambda: "?")()
    print(f"INFO gemm torch={torch.__version__} cuda={torch.version.cuda} "
          f"device={torch.cuda.get_device_name(dev)!r} blas={blas} "
          f"bf16_reduced_precision_reduction={torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction}",
          flush=True)
    stream = torch.cuda.Stream(dev)
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    gen = torch.Generator(device=dev).manual_seed(2026)

    with torch.cuda.stream(stream):
        for size in sizes:
            a32 = torch.rand(size, size, device=dev, generator=gen) * 2 - 1
            b32 = torch.rand(size, size, device=dev, generator=gen) * 2 - 1
            for kind in kinds:
                if kind == "fp8":
                    if not hasattr(torch, "float8_e4m3fn") or torch.cuda.get_device_capability(dev) < (8, 9):
                        print(f"INFO gemm op=gemm_{kind}_{size} impl=torch: no FP8 on this torch or GPU, left out", flush=True)
                        continue
                    def ints():
                        return torch.randint(-8, 9, (size, size), device=dev, generator=gen, dtype=torch.float32)
                    a = ints().to(torch.float8_e4m3fn)
                    b = ints().to(torch.float8_e4m3fn).t()  # W.t(): column-major K×N
                    one = torch.ones((), device=dev, dtype=torch.float32)
                    c = torch.empty(size, size, device=dev, dtype=torch.bfloat16)

                    def mm():
                        torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=False, out=c)
                else:
                    if kind in ("bf16", "bf16lt"):
                        a, b = a32.to(torch.bfloat16), b32.to(torch.bfloat16)
                    else:
                        a, b = a32, b32
                    c = torch.empty(size, size, device=dev, dtype=a.dtype)

                    def mm():
                        torch.matmul(a, b, out=c)
                torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"

                def timed(n):
                    start.record(stream)
                    for _ in range(n):
                        mm()
                    stop.record(stream)
                    stop.synchronize()
                    return start.elapsed_time(stop)

                try:
                    timed(2)  # warm-up: cuBLAS picks and loads its kernels
                except (RuntimeError, TypeError) as e:
                    if kind != "fp8":
                        raise
                    print(f"INFO gemm op=gemm_{kind}_{size} impl=torch: torch._scaled_mm failed, left out: {e}", flush=True)
                    continue
                check(a, b, c, kind)
                probe = 4
                n = max(3, min(100000, math.ceil(args.ms * probe / timed(probe))))
                flops = 2.0 * size ** 3
                tflops = [flops * n / (timed(n) * 1e-3) / 1e12 for _ in range(args.samples)]
                print(f"RESULT impl=torch op=gemm_{kind}_{size} value={statistics.median(tflops):.3f} unit=TFLOP/s", flush=True)
                print(f"INFO gemm op=gemm_{kind}_{size} impl=torch allow_tf32={torch.backends.cuda.matmul.allow_tf32} "
                      f"min={min(tflops):.3f} max={max(tflops):.3f} samples={args.samples} gemms_per_sample={n}", flush=True)
    torch.backends.cuda.matmul.allow_tf32 = False


def check(a, b, c, kind):
    """Checks a few rows of the product against float64, as gobench does."""
    stream = torch.cuda.current_stream()
    stream.synchronize()
    rows = [0, a.shape[0] - 1, a.shape[0] // 3]
    # Through float32 first: float8 tensors have few operations of their own.
    ad, bd = a.float()[rows].double(), b.float().double()
    want = ad @ bd
    scale = ad.abs() @ bd.abs()
    tol = {"f32": 1e-4, "tf32": 5e-3, "bf16": 1e-2, "bf16lt": 1e-2, "fp8": 1e-2}[kind]
    err = ((c[rows].double() - want).abs() / scale).max().item()
    if not err <= tol:
        raise SystemExit(f"gemm.py: {kind} {a.shape[0]}: error {err:.3g} of the terms' magnitude, tolerance {tol}")


if __name__ == "__main__":
    main()
