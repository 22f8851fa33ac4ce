# Which destroys need their context current? An event, a stream and 1 MiB
# of device memory are made in the primary context, then destroyed with no
# context current, and with another context current. Then what
# cuCtxGetCurrent costs from Python, for scale.
#
#   /opt/torch/.venv/bin/python bench/python/destroy_context.py
import time

from cuda.bindings import driver as d

def ok(r):
    if r[0] != d.CUresult.CUDA_SUCCESS:
        raise SystemExit(f"setup failed: {r[0]}")
    return r[1:] if len(r) > 2 else (r[1] if len(r) == 2 else None)

ok(d.cuInit(0))
dev = ok(d.cuDeviceGet(0))
a = ok(d.cuDevicePrimaryCtxRetain(dev))
try:
    b = ok(d.cuCtxCreate(None, 0, dev))  # CUDA 13's (params, flags, dev)
except TypeError:
    b = ok(d.cuCtxCreate(0, dev))  # before: (flags, dev)
ok(d.cuCtxSetCurrent(a))

def make():
    ok(d.cuCtxSetCurrent(a))
    e = ok(d.cuEventCreate(d.CUevent_flags.CU_EVENT_DISABLE_TIMING))
    s = ok(d.cuStreamCreate(d.CUstream_flags.CU_STREAM_NON_BLOCKING))
    p = ok(d.cuMemAlloc(1 << 20))
    return e, s, p

for cur, name in ((None, "none current"), (b, "other context current")):
    e, s, p = make()
    ok(d.cuEventRecord(e, s))
    ok(d.cuCtxSetCurrent(cur if cur is not None else d.CUcontext(0)))
    print(name, "cuEventDestroy", d.cuEventDestroy(e)[0])
    print(name, "cuStreamDestroy", d.cuStreamDestroy(s)[0])
    print(name, "cuMemFree", d.cuMemFree(p)[0])
ok(d.cuCtxSetCurrent(a))
N = 200000
t = time.perf_counter_ns()
for _ in range(N):
    d.cuCtxGetCurrent()
print("python cuCtxGetCurrent ns", (time.perf_counter_ns() - t) / N)
