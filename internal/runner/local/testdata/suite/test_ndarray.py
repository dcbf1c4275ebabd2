"""A flaky "CUDA" suite for the local-mode end-to-end test.

With pytest-repeat --count 4, repetition 2 of test_grad[cuda] aborts its xdist worker after
appending an Xid 31 line to the fake kernel log, and repetition 3 fails. test_slow sleeps when
LOCAL_SUITE_SLOW is set, so a test can interrupt the run mid-way. Without pytest-repeat (the
sanitizer run) every test passes, except under the GPU core dump pass
(CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1), where test_grad[cuda] writes a fake dump where
CUDA_COREDUMP_FILE says (the cuda-gdb double reads it) and aborts, as a kernel exception does.
"""
import os
import socket
import struct
import time

import pytest

XID = ("[Wed Dec  2 10:47:01 2026] NVRM: Xid (PCI:0001:00:00): 31, pid={pid}, name=pytest-xdist, "
       "channel 0x00000201, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC0 GPCCLIENT_T1_0 "
       "faulted @ 0x70a2_c8000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE\n")

DUMP = ("FAKE CUDA COREDUMP\nkernel=ad_fibonacci_kernel(float*, int)\nexception=Warp Illegal Address\n"
        "pc=0x7f31abb9f6d0\nfile=/src/ad.cu:42\nblock=(0,0,0)\nthread=(31,0,0)\nsm=12\n")

# The ELF64 header a GPU core dump starts with, as the driver writes it: little-endian, ET_CORE
# (4), EM_CUDA (190), 64 bytes. The marker text the cuda-gdb double reads follows it.
ELF_HEADER = (b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
              + struct.pack("<HHIQQQIHHHHHH", 4, 190, 1, 0, 0, 0, 0, 64, 0, 0, 0, 0, 0))


@pytest.mark.parametrize("dev", ["cpu", "cuda"])
def test_grad(dev, request):
    name = request.node.name
    if dev == "cuda" and os.environ.get("CUDA_ENABLE_COREDUMP_ON_EXCEPTION") == "1":
        path = (os.environ.get("CUDA_COREDUMP_FILE", "core_%h.%p.%t")
                .replace("%h", socket.gethostname()).replace("%p", str(os.getpid()))
                .replace("%t", str(int(time.time()))))
        with open(path, "wb") as f:
            f.write(ELF_HEADER + DUMP.encode())
        os.abort()
    if dev == "cuda" and name.endswith("-2-4]"):
        log = os.environ.get("FAKE_DMESG_FILE")
        if log:
            with open(log, "a") as f:
                f.write(XID.format(pid=os.getpid()))
        os.abort()
    if dev == "cuda" and name.endswith("-3-4]"):
        assert False, "gradient mismatch"


def test_slow():
    if os.environ.get("LOCAL_SUITE_SLOW"):
        time.sleep(60)
