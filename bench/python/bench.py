"""NVIDIA's cuda.bindings (cuda-python) doing what bench/c/bench.c does.

    python3 bench.py ../kernels/empty.ptx

Each line: RESULT impl=python op=NAME value=V unit=ns/op|GB/s
"""
import ctypes
import sys
import time

from cuda.bindings import driver as cu


def check(result):
    err = result[0]
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"driver call failed: {err}")
    return result[1] if len(result) == 2 else result[1:]


def report(op, value, unit):
    print(f"RESULT impl=python op={op} value={value:.3f} unit={unit}", flush=True)


def timed(op, n, body):
    t = time.perf_counter_ns()
    body(n)
    report(op, (time.perf_counter_ns() - t) / n, "ns/op")


def main():
    ptx = open(sys.argv[1], "rb").read() + b"\0"
    check(cu.cuInit(0))
    dev = check(cu.cuDeviceGet(0))
    ctx = check(cu.cuDevicePrimaryCtxRetain(dev))
    check(cu.cuCtxSetCurrent(ctx))
    s = check(cu.cuStreamCreate(1))
    ev = check(cu.cuEventCreate(2))
    mod = check(cu.cuModuleLoadData(ptx))
    k1 = check(cu.cuModuleGetFunction(mod, b"empty1"))
    k16 = check(cu.cuModuleGetFunction(mod, b"empty16"))

    def ctx_get_current(n):
        for _ in range(n):
            check(cu.cuCtxGetCurrent())
    timed("ctx_get_current", 200000, ctx_get_current)

    def event_record(n):
        for _ in range(n):
            check(cu.cuEventRecord(ev, s))
    timed("event_record", 100000, event_record)
    check(cu.cuStreamSynchronize(s))

    def event_query(n):
        for _ in range(n):
            check(cu.cuEventQuery(ev))
    timed("event_query", 100000, event_query)

    args1 = ((0,), (ctypes.c_uint64,))
    args16 = ((0,) * 16, (ctypes.c_uint64,) * 16)

    def launch(k, args):
        def body(n):
            for _ in range(n):
                check(cu.cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s, args, 0))
            check(cu.cuStreamSynchronize(s))
        return body
    timed("launch_1arg", 50000, launch(k1, args1))
    timed("launch_16arg", 50000, launch(k16, args16))

    def launch_sync(n):
        for _ in range(n):
            check(cu.cuLaunchKernel(k1, 1, 1, 1, 1, 1, 1, 0, s, args1, 0))
            check(cu.cuStreamSynchronize(s))
    timed("launch_sync", 10000, launch_sync)

    def stream_create_destroy(n):
        for _ in range(n):
            x = check(cu.cuStreamCreate(1))
            check(cu.cuStreamDestroy(x))
    timed("stream_create_destroy", 10000, stream_create_destroy)

    def alloc_free(n):
        for _ in range(n):
            p = check(cu.cuMemAlloc(1 << 20))
            check(cu.cuMemFree(p))
    timed("alloc_free_1mib", 2000, alloc_free)

    size = 64 << 20
    host = check(cu.cuMemAllocHost(size))
    ctypes.memset(host, 1, size)
    dptr = check(cu.cuMemAlloc(size))
    n = 50
    check(cu.cuMemcpyHtoDAsync(dptr, host, size, s))
    check(cu.cuStreamSynchronize(s))
    t = time.perf_counter_ns()
    for _ in range(n):
        check(cu.cuMemcpyHtoDAsync(dptr, host, size, s))
    check(cu.cuStreamSynchronize(s))
    report("h2d_64mib", size * n / (time.perf_counter_ns() - t), "GB/s")
    t = time.perf_counter_ns()
    for _ in range(n):
        check(cu.cuMemcpyDtoHAsync(host, dptr, size, s))
    check(cu.cuStreamSynchronize(s))
    report("d2h_64mib", size * n / (time.perf_counter_ns() - t), "GB/s")


if __name__ == "__main__":
    main()
