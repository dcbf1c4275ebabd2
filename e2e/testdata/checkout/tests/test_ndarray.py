"""A flaky "CUDA" suite: the project the simulated runner checks out.

Under pytest-repeat (--count N, N >= 3) repetition 2 of test_grad[cuda] appends an Xid 31 line to
the fake kernel log ($FAKE_DMESG_FILE, read by the dmesg double), with its own worker's pid and
the time of day as `dmesg --ctime` prints it, and aborts its xdist worker, like a CUDA
illegal-address abort; repetition 3 fails an assertion. The cpu variant always passes, so
`-k cpu` is a clean run. Without pytest-repeat (the compute-sanitizer run, which passes
-p no:repeat) every test passes: the sanitizer double supplies the findings. Under the GPU core
dump pass (CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1) test_grad[cuda] faults the way the driver
reports it (fakecuda.fault: progress lines, a dump, an abort).
"""
import os
import re
import time

import pytest

import fakecuda

XID = ("[{stamp}] NVRM: Xid (PCI:0001:00:00): 31, pid={pid}, name=pytest-xdist, "
       "channel 0x00000201, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC0 GPCCLIENT_T1_0 "
       "faulted @ 0x70a2_c8000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE\n")

# pytest-repeat names the repetitions test_grad[cuda-2-4]: repetition 2 of 4.
REPETITION = re.compile(r"-(\d+)-\d+\]$")


def repetition(request):
    m = REPETITION.search(request.node.name)
    return int(m.group(1)) if m else 0


@pytest.mark.parametrize("dev", ["cpu", "cuda"])
def test_grad(dev, request):
    if dev != "cuda":
        return
    if os.environ.get("CUDA_ENABLE_COREDUMP_ON_EXCEPTION") == "1":
        fakecuda.fault()
    rep = repetition(request)
    if rep == 2:
        log = os.environ.get("FAKE_DMESG_FILE")
        if log:
            with open(log, "a") as f:
                f.write(XID.format(stamp=time.strftime("%a %b %e %H:%M:%S %Y"), pid=os.getpid()))
        os.abort()
    if rep == 3:
        assert False, "gradient mismatch"
