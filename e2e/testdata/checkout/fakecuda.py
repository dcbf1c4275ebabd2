"""The project's GPU backend, faked: its initialisation, as the smoke test calls it, and a kernel
fault as the CUDA driver reports it when GPU core dumps are on.

FAKE_CUDA_INIT=fail makes init fail the way a runner without a usable GPU does.
"""
import os
import socket
import struct
import sys
import time

DUMP = ("FAKE CUDA COREDUMP\nkernel=grad_kernel(float*, int)\nexception=Warp Illegal Address\n"
        "pc=0x7f31abb9f6d0\nfile=/src/grad.cu:42\nblock=(0,0,0)\nthread=(31,0,0)\nsm=12\n")

# The ELF64 header a GPU core dump starts with, as the driver writes it: little-endian, ET_CORE
# (4), EM_CUDA (190), 64 bytes. The marker text the cuda-gdb double reads follows it.
ELF_HEADER = (b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
              + struct.pack("<HHIQQQIHHHHHH", 4, 190, 1, 0, 0, 0, 0, 64, 0, 0, 0, 0, 0))


def init():
    if os.environ.get("FAKE_CUDA_INIT") == "fail":
        print("[E cuda_driver.h:operator()@93] CUDA Error CUDA_ERROR_NO_DEVICE while calling cuInit", file=sys.stderr)
        raise RuntimeError("cuInit failed: CUDA_ERROR_NO_DEVICE")
    print("cuda init OK (QD_OFFLINE_CACHE=%s)" % os.environ.get("QD_OFFLINE_CACHE"))


def fault():
    """A kernel's illegal address with CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1: the driver's progress
    lines, the dump where CUDA_COREDUMP_FILE says (%h host, %p pid, %t time), then the abort."""
    path = (os.environ.get("CUDA_COREDUMP_FILE", "core_%h.%p.%t")
            .replace("%h", socket.gethostname()).replace("%p", str(os.getpid()))
            .replace("%t", str(int(time.time()))))
    if os.environ.get("CUDA_COREDUMP_SHOW_PROGRESS") == "1":
        sys.stderr.write("[10:47:01.100300] coredump: Detected an exception of type "
                         "CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS (14)\n"
                         "[10:47:01.100304] coredump:   - PC 0x7f31abb9f6d0\n")
    with open(path, "wb") as f:
        f.write(ELF_HEADER + DUMP.encode())
    if os.environ.get("CUDA_COREDUMP_SHOW_PROGRESS") == "1":
        sys.stderr.write("[10:47:01.305111] coredump: Writing ELF file to %s\n" % path)
    sys.stderr.flush()
    os.abort()
