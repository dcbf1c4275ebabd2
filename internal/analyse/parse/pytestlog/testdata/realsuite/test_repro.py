"""A tiny suite for the real-pytest test of package pytestlog.

Run with `-n 2 --count 3`: repetition 2 of test_kernel[cuda] kills its xdist
worker with os.abort() (like a CUDA illegal address taking the process
down) and repetition 3 of test_kernel[cpu] fails an assertion.
"""
import os
import resource

import pytest


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_kernel(device, request):
    name = request.node.name
    if device == "cuda" and name.endswith("-2-3]"):
        # No core file: the abort is the point, the dump is not.
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.abort()
    if device == "cpu" and name.endswith("-3-3]"):
        assert False, "wrong result on repetition 3"


def test_plain():
    pass
