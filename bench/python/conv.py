"""torch.nn.functional.conv2d on the convolutions of bench/dnnbench, timed
the same way.

    /opt/torch/.venv/bin/python bench/python/conv.py [--types f32,tf32,f16,bf16]
        [--samples 15] [--ms 100] [--benchmark 1]

Per shape and type: f32 is float32 NCHW with
torch.backends.cudnn.allow_tf32 off, tf32 the same with it on, f16 and
bf16 are float16 and bfloat16 in channels_last (NHWC) memory, as
dnnbench's. x and w are uniform in [-1, 1). torch.backends.cudnn.benchmark
is on by default, as dnnbench's exhaustive search: the first call of a
shape times cuDNN's algorithms. On one stream of its own: a warm-up, a
probe that sets n, the convolutions per sample, so that a sample takes
about --ms of GPU time, then --samples samples of n back-to-back
convolutions between two CUDA events. Prints, per case, the median as

    RESULT impl=torch op=conv_<type>_<shape> value=V unit=TFLOP/s

and an INFO line (torch's version and its cuDNN's). torch calls the cuDNN
it ships with, which may be another version than the system's:
bench/dnn.sh points dnnbench at torch's where it exists, and the INFO
lines of both say which each loaded.
"""
import argparse
import statistics

import torch
import torch.nn.functional as F

# name, N, C, H, W, K, R, S, pad, stride, groups: dnnbench's list, in order.
SHAPES = [
    ("r50_conv1", 32, 3, 224, 224, 64, 7, 7, 3, 2, 1),
    ("r50_3x3_56", 32, 64, 56, 56, 64, 3, 3, 1, 1, 1),
    ("r50_1x1_56", 32, 256, 56, 56, 64, 1, 1, 0, 1, 1),
    ("r50_3x3_s2_56", 32, 128, 56, 56, 128, 3, 3, 1, 2, 1),
    ("r50_3x3_14", 32, 256, 14, 14, 256, 3, 3, 1, 1, 1),
    ("r50_1x1_14", 32, 1024, 14, 14, 256, 1, 1, 0, 1, 1),
    ("r50_3x3_7", 32, 512, 7, 7, 512, 3, 3, 1, 1, 1),
    ("mbv2_dw_28", 32, 192, 28, 28, 192, 3, 3, 1, 1, 192),
]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--types", default="f32,tf32,f16,bf16")
    p.add_argument("--samples", type=int, default=15)
    p.add_argument("--ms", type=float, default=100.0)
    p.add_argument("--benchmark", type=int, default=1)
    args = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("conv.py: no CUDA device visible to torch")
    dev = torch.device("cuda", 0)
    torch.backends.cudnn.benchmark = bool(args.benchmark)
    print(f"INFO conv torch={torch.__version__} cuda={torch.version.cuda} "
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

    with torch.cuda.stream(stream):
        for kind in [k.strip() for k in args.types.split(",")]:
            if kind not in ("f32", "tf32", "f16", "bf16"):
                raise SystemExit(f"conv.py: unknown type {kind!r} (f32, tf32, f16, bf16)")
            dtype = {"f32": torch.float32, "tf32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[kind]
            fmt = torch.contiguous_format if kind in ("f32", "tf32") else torch.channels_last
            torch.backends.cudnn.allow_tf32 = kind == "tf32"
            for name, n, c, h, w, k, r, s, pad, stride, groups in SHAPES:
                x = (torch.rand(n, c, h, w, device=dev, generator=gen) * 2 - 1).to(dtype).contiguous(memory_format=fmt)
                wt = (torch.rand(k, c // groups, r, s, device=dev, generator=gen) * 2 - 1).to(dtype).contiguous(memory_format=fmt)

                def conv():
                    return F.conv2d(x, wt, stride=stride, padding=pad, groups=groups)

                y = conv()
                timed(conv, 3)
                one = max(timed(conv, 1), 1e-3)
                count = max(1, int(args.ms / one))
                times = [timed(conv, count) / count for _ in range(args.samples)]
                med = statistics.median(times)
                _, _, p, q = y.shape
                flops = 2.0 * n * k * p * q * (c // groups) * r * s
                print(f"RESULT impl=torch op=conv_{kind}_{name} value={flops / (med * 1e-3) / 1e12:.2f} unit=TFLOP/s", flush=True)


if __name__ == "__main__":
    main()
