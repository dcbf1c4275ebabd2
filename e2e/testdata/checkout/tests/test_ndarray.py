"""A flaky "CUDA" suite: the project the simulated runner checks out.

Under pytest-repeat (--count N, N >= 3) repetition 2 of test_grad[cuda] appends an Xid 31 line to
the fake kernel log ($FAKE_DMESG_FILE, read by the dmesg double) and aborts its xdist worker,
like a CUDA illegal-address abort; repetition 3 fails an assertion. The cpu variant always
passes, so `-k cpu` is a clean run. Without pytest-repeat (the compute-sanitizer run, which
passes -p no:repeat) every test passes: the sanitizer double supplies the findings.
"""
import os
import re

import pytest

XID = ("[Wed Dec  2 10:47:01 2026] NVRM: Xid (PCI:0001:00:00): 31, pid={pid}, name=pytest-xdist, "
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
    rep = repetition(request)
    if rep == 2:
        log = os.environ.get("FAKE_DMESG_FILE")
        if log:
            with open(log, "a") as f:
                f.write(XID.format(pid=os.getpid()))
        os.abort()
    if rep == 3:
        assert False, "gradient mismatch"
