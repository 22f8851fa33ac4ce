"""Shares device memory with a Go process through CUDA IPC handles.

  ipc_interop.py import HEX N   open the Go process's handle (hex), check
                                 that element i of N uint32 is 3*i, write
                                 5*i, close, print "ok"
  ipc_interop.py export N        allocate N uint32 holding 11*i, print the
                                 handle in hex, wait for a line on stdin,
                                 check that the Go process wrote 13*i,
                                 print "ok"

Run by TestIPCPython with the interpreter GOCUDA_TEST_PYTHON names, which
needs cuda.bindings.
"""
import ctypes
import sys

from cuda.bindings import driver as cu


def check(result):
    err, *rest = result
    if err != cu.CUresult.CUDA_SUCCESS:
        raise SystemExit(f"CUDA error {err}")
    return rest[0] if len(rest) == 1 else rest


def handle_bytes(h):
    return bytes(b & 0xFF for b in h.reserved)


def handle_from(raw):
    h = cu.CUipcMemHandle()
    try:
        h.reserved = raw
    except (TypeError, ValueError):
        h.reserved = list(raw)
    return h


def setup():
    check(cu.cuInit(0))
    dev = check(cu.cuDeviceGet(0))
    ctx = check(cu.cuDevicePrimaryCtxRetain(dev))
    check(cu.cuCtxSetCurrent(ctx))
    return dev


def read(ptr, n):
    buf = (ctypes.c_uint32 * n)()
    check(cu.cuMemcpyDtoH(ctypes.addressof(buf), ptr, 4 * n))
    return buf


def write(ptr, buf):
    check(cu.cuMemcpyHtoD(ptr, ctypes.addressof(buf), 4 * len(buf)))


def do_import(hexhandle, n):
    setup()
    h = handle_from(bytes.fromhex(hexhandle))
    flags = int(cu.CUipcMem_flags.CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)
    ptr = check(cu.cuIpcOpenMemHandle(h, flags))
    buf = read(ptr, n)
    for i in range(n):
        if buf[i] != 3 * i:
            raise SystemExit(f"element {i} is {buf[i]}, want {3 * i}")
        buf[i] = 5 * i
    write(ptr, buf)
    check(cu.cuCtxSynchronize())
    check(cu.cuIpcCloseMemHandle(ptr))
    print("ok")


def do_export(n):
    setup()
    ptr = check(cu.cuMemAlloc(4 * n))
    buf = (ctypes.c_uint32 * n)(*[11 * i for i in range(n)])
    write(ptr, buf)
    h = check(cu.cuIpcGetMemHandle(ptr))
    print(handle_bytes(h).hex(), flush=True)
    sys.stdin.readline()
    got = read(ptr, n)
    for i in range(n):
        if got[i] != 13 * i:
            raise SystemExit(f"element {i} is {got[i]} after Go wrote, want {13 * i}")
    check(cu.cuMemFree(ptr))
    print("ok", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "import":
        do_import(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "export":
        do_export(int(sys.argv[2]))
    else:
        raise SystemExit(f"unknown mode {sys.argv[1]}")
