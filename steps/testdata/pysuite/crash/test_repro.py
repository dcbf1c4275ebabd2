"""A flaky "CUDA" suite for the reproduce end-to-end test.

Run with pytest-repeat --count 5: repetition 3 of test_x[cuda] aborts its
xdist worker (like a CUDA illegal-address abort), after appending an Xid
line to the fake kernel log; repetition 4 fails an assertion. Without
pytest-repeat (the sanitizer run) every test passes.
"""
import os

import pytest

XID = ("[Wed Dec  2 10:47:01 2026] NVRM: Xid (PCI:0001:00:00): 31, pid={pid}, name=pytest-xdist, "
       "channel 0x00000201, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC0 GPCCLIENT_T1_0 "
       "faulted @ 0x70a2_c8000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE\n")


@pytest.mark.parametrize("dev", ["cpu", "cuda"])
def test_x(dev, request):
    name = request.node.name
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
