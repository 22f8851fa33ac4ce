"""torch.distributed all-reduce (NCCL backend) across the GPUs of this
machine, one process per GPU (torch.multiprocessing), in-place float32,
the sizes of bench/ncclbench; prints RESULT lines with nccl-tests' bus
bandwidth.

    /opt/torch/.venv/bin/python bench/python/allreduce.py [--min-mib 8] [--max-mib 1024] [--iters 20] [--rounds 5]
"""

import argparse
import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, world, port, args):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    size = args.min_mib << 20
    buf = torch.ones((args.max_mib << 20) // 4, dtype=torch.float32, device="cuda")
    sizes = []
    while size <= args.max_mib << 20:
        sizes.append(size)
        size *= 2
    best = {}
    for rnd in range(args.rounds):
        for size in sizes:
            x = buf[: size // 4]
            for _ in range(3):
                dist.all_reduce(x)
            torch.cuda.synchronize()
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            dist.barrier()
            start.record()
            for _ in range(args.iters):
                dist.all_reduce(x)
            stop.record()
            torch.cuda.synchronize()
            sec = start.elapsed_time(stop) / 1e3 / args.iters
            bus = size * 2 * (world - 1) / world / sec / 1e9
            if rank == 0:
                print(f"RESULT nccl-allreduce impl=torch round={rnd} bytes={size} us={sec * 1e6:.1f} busbw_gbs={bus:.2f}", flush=True)
            best[size] = min(best.get(size, sec), sec)
    if rank == 0:
        print(f"\n# torch.distributed all-reduce float32 in place, {world} processes, NCCL {torch.cuda.nccl.version()}, best of {args.rounds}")
        print(f"{'bytes':>12} {'busbw GB/s':>12}")
        for size in sizes:
            print(f"{size:12d} {size * 2 * (world - 1) / world / best[size] / 1e9:12.1f}")
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--min-mib", type=int, default=8)
    p.add_argument("--max-mib", type=int, default=1024)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    world = torch.cuda.device_count()
    if world < 2:
        print(f"allreduce.py: {world} GPU: the benchmark needs two", file=sys.stderr)
        sys.exit(1)
    mp.spawn(worker, args=(world, free_port(), args), nprocs=world)


if __name__ == "__main__":
    main()
