"""A flaky "CUDA" suite for the reproduce end-to-end test.

Run with pytest-repeat --count 5: repetition 3 of test_x[cuda] aborts its
xdist worker (like a CUDA illegal-address abort), after appending an Xid
line to the fake kernel log; repetition 4 fails an assertion. Without
pytest-repeat (the sanitizer run) every test passes.

Under the GPU core dump pass (CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1) test_x[cuda]
faults the way the CUDA driver reports a kernel exception with core dumps on:
the driver's progress lines on stderr, a (fake) dump where CUDA_COREDUMP_FILE
says, then an abort. FAKE_COREDUMP_COUNTER (a file) and FAKE_COREDUMP_AFTER=N
make only the N-th and later runs fault (an intermittent bug);
FAKE_COREDUMP_PAD=BYTES makes the dump that much bigger; FAKE_COREDUMP_HANG=1 makes test_x[cuda]
hang instead. FAKE_COREDUMP_STALL=N makes the first N faulting runs (by the counter) stall
halfway through writing the dump, as a driver writing a big dump to a slow disk does, until the
rerun's timeout kills them; later runs dump whole. FAKE_COREDUMP_EMPTY=N makes the first N
faulting runs leave the dump file empty, as a driver that could not write it (a full disk)
does. FAKE_COREDUMP_NOFILE=N makes the first N faulting runs print the driver's exception lines
and leave no dump file at all, as a driver that could not create it (a folder it cannot write)
does; FAKE_COREDUMP_NOFILE_AFTER=N makes the faulting runs after the N-th do so (after stalled
ones, say). FAKE_COREDUMP_NOTELF=N makes the first N faulting runs leave a file of a dump's size that
is not an ELF file (no ELF header). FAKE_COREDUMP_JUNK=1 makes the dump an ELF header followed by
junk: an ELF file that is not a GPU core dump (the cuda-gdb double cannot read it). FAKE_COREDUMP_FAULTS=14,6 gives each
faulting run (by the counter) its own exception, by CUDBG code (the last for later runs): 14 a
Warp Illegal Address, 6 a Warp Misaligned Address at another PC. The dump records the core dump
variables it was written under (generation_flags=, lightweight=). Every dump starts with a
real ELF64 header (64 bytes, ET_CORE for EM_CUDA), as the driver's does; the marker text follows.
"""
import os
import socket
import struct
import sys
import time

import pytest

XID = ("[Wed Dec  2 10:47:01 2026] NVRM: Xid (PCI:0001:00:00): 31, pid={pid}, name=pytest-xdist, "
       "channel 0x00000201, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC0 GPCCLIENT_T1_0 "
       "faulted @ 0x70a2_c8000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE\n")

DUMP = ("FAKE CUDA COREDUMP\nkernel=ad_fibonacci_kernel(float*, int)\nexception={exception}\n"
        "pc={pc}\nfile=/src/ad.cu:42\nblock=(0,0,0)\nthread=(31,0,0)\nsm=12\n")

# The ELF64 header of a GPU core dump: little-endian, ET_CORE (4), EM_CUDA (190), 64 bytes.
ELF_HEADER = (b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
              + struct.pack("<HHIQQQIHHHHHH", 4, 190, 1, 0, 0, 0, 0, 64, 0, 0, 0, 0, 0))
assert len(ELF_HEADER) == 64

# CUDBG exception code: the driver's name, cuda-gdb's name, the PC.
FAULTS = {
    "14": ("WARP_ILLEGAL_ADDRESS", "Warp Illegal Address", "0x7f31abb9f6d0"),
    "6": ("WARP_MISALIGNED_ADDRESS", "Warp Misaligned Address", "0x7f31abb9f7a0"),
}


def fake_gpu_fault():
    counter = os.environ.get("FAKE_COREDUMP_COUNTER")
    runs = 0
    if counter:
        runs = 1
        if os.path.exists(counter):
            with open(counter) as f:
                runs = int(f.read() or 0) + 1
        with open(counter, "w") as f:
            f.write(str(runs))
        if runs < int(os.environ.get("FAKE_COREDUMP_AFTER", "1")):
            return
    codes = os.environ.get("FAKE_COREDUMP_FAULTS", "14").split(",")
    code = codes[min(max(runs, 1), len(codes)) - 1]
    cudbg, exception, pc = FAULTS[code]
    dump = DUMP.format(exception=exception, pc=pc)
    path = (os.environ.get("CUDA_COREDUMP_FILE", "core_%h.%p.%t")
            .replace("%h", socket.gethostname()).replace("%p", str(os.getpid()))
            .replace("%t", str(int(time.time()))))
    if os.environ.get("CUDA_COREDUMP_SHOW_PROGRESS") == "1":
        sys.stderr.write("[10:47:01.100300] coredump: Detected an exception of type "
                         "CUDBG_EXCEPTION_%s (%s)\n"
                         "[10:47:01.100302] coredump:   - SM: 12\n"
                         "[10:47:01.100304] coredump:   - PC %s\n" % (cudbg, code, pc))
    sys.stderr.flush()
    if 0 < runs <= int(os.environ.get("FAKE_COREDUMP_NOFILE", "0")):
        os.abort()
    nofile_after = os.environ.get("FAKE_COREDUMP_NOFILE_AFTER")
    if nofile_after and runs > int(nofile_after):
        os.abort()
    if os.environ.get("CUDA_COREDUMP_SHOW_PROGRESS") == "1":
        sys.stderr.write("[10:47:01.305111] coredump: Writing ELF file to %s\n" % path)
    sys.stderr.flush()
    if 0 < runs <= int(os.environ.get("FAKE_COREDUMP_EMPTY", "0")):
        open(path, "w").close()
        os.abort()
    data = ELF_HEADER + dump.encode()
    if 0 < runs <= int(os.environ.get("FAKE_COREDUMP_NOTELF", "0")):
        data = dump.encode()  # a dump's size, no ELF header
    if os.environ.get("FAKE_COREDUMP_JUNK") == "1":
        data = ELF_HEADER + b"\0" * len(dump)
    if 0 < runs <= int(os.environ.get("FAKE_COREDUMP_STALL", "0")):
        with open(path, "wb") as f:
            f.write(data[:len(data) // 2])
        time.sleep(600)
    with open(path, "wb") as f:
        f.write(data + ("generation_flags=%s\nlightweight=%s\n" % (
            os.environ.get("CUDA_COREDUMP_GENERATION_FLAGS", ""),
            os.environ.get("CUDA_ENABLE_LIGHTWEIGHT_COREDUMP", ""))
                + "x" * int(os.environ.get("FAKE_COREDUMP_PAD", "0"))).encode())
    os.abort()


@pytest.mark.parametrize("dev", ["cpu", "cuda"])
def test_x(dev, request):
    name = request.node.name
    if dev == "cuda" and os.environ.get("FAKE_COREDUMP_HANG"):
        time.sleep(600)
    if dev == "cuda" and os.environ.get("CUDA_ENABLE_COREDUMP_ON_EXCEPTION") == "1":
        fake_gpu_fault()
    if dev == "cuda" and name.endswith("-3-5]"):
        log = os.environ.get("FAKE_DMESG_FILE")
        if log:
            with open(log, "a") as f:
                f.write(XID.format(pid=os.getpid()))
        os.abort()
    if dev == "cuda" and name.endswith("-4-5]"):
        assert False, "ndarray gradient mismatch"


def test_y():
    pass
