"""torch.nn.functional.scaled_dot_product_attention on the attention shapes
of bench/dnnbench (dnnbench -ops attention), timed the same way.

    /opt/torch/.venv/bin/python bench/python/sdpa.py [--types f16,bf16]
        [--samples 15] [--ms 100]

Per shape and type: q, k and v of batch×heads×seq×head_dim, contiguous in
that order (dnnbench's BHSD), uniform in [-1, 1), the default scale, and
is_causal as the shape says; torch picks its fastest backend (flash
attention, cuDNN's, or memory-efficient), as a user's call gets. On one
stream of its own: a warm-up, a probe that sets n, the calls per sample,
so that a sample takes about --ms of GPU time, then --samples samples of n
back-to-back calls between two CUDA events. Prints, per case, the median as

    RESULT impl=torch op=sdpa_<type>_<shape> value=V unit=TFLOP/s

counting 4·B·H·S²·D, halved for a causal mask, as dnnbench does, and an
INFO line (torch's version and its cuDNN's).
"""
import argparse
import statistics

import torch
import torch.nn.functional as F

# name, batch, heads, seq, head_dim, causal: dnnbench's list, in order.
SHAPES = [
    ("b8_h16_s1024_d64", 8, 16, 1024, 64, False),
    ("b8_h16_s1024_d128", 8, 16, 1024, 128, False),
    ("b4_h32_s2048_d128_causal", 4, 32, 2048, 128, True),
    ("b1_h32_s8192_d128_causal", 1, 32, 8192, 128, True),
]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--types", default="f16,bf16")
    p.add_argument("--samples", type=int, default=15)
    p.add_argument("--ms", type=float, default=100.0)
    args = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("sdpa.py: no CUDA device visible to torch")
    dev = torch.device("cuda", 0)
    print(f"INFO attention torch={torch.__version__} cuda={torch.version.cuda} "
          f"cudnn={torch.backends.cudnn.version()} device={torch.cuda.get_device_name(dev)!r}", flush=True)
    stream = torch.cuda.Stream(dev)
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    gen = torch.Generator(device=dev).manual_seed(2026)

    def timed(f, n):
        start.record(stream)
        for _ in range(n):
            f()
        stop.record(stream)
        stop.synchronize()
        return start.elapsed_time(stop)  # milliseconds

    with torch.cuda.stream(stream), torch.inference_mode():
        for kind in [k.strip() for k in args.types.split(",")]:
            if kind not in ("f16", "bf16"):
                continue  # dnnbench times no other type of attention
            dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[kind]
            for name, b, h, s, d, causal in SHAPES:
                q, k, v = ((torch.rand(b, h, s, d, device=dev, generator=gen) * 2 - 1).to(dtype) for _ in range(3))

                def attend():
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

                timed(attend, 3)
                one = max(timed(attend, 1), 1e-3)
                count = max(1, int(args.ms / one))
                times = [timed(attend, count) / count for _ in range(args.samples)]
                med = statistics.median(times)
                flops = 4.0 * b * h * s * s * d / (2 if causal else 1)
                print(f"RESULT impl=torch op=sdpa_{kind}_{name} value={flops / (med * 1e-3) / 1e12:.2f} unit=TFLOP/s", flush=True)


if __name__ == "__main__":
    main()
