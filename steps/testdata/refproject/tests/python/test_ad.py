"""A flaky "CUDA" test in the reference project's layout (see ../../README.md).

With pytest-repeat --count 5, repetition 3 of test_x[cuda] aborts its worker (a CUDA
illegal-address abort) and repetition 4 fails (its worker is then retired by the conftest).
Without pytest-repeat (the sanitizer's run) every test passes.
"""
import os

import pytest


@pytest.mark.parametrize("dev", ["cpu", "cuda"])
def test_x(dev, request):
    name = request.node.name
    if dev == "cuda" and name.endswith("-3-5]"):
        os.abort()
    if dev == "cuda" and name.endswith("-4-5]"):
        assert False, "ndarray gradient mismatch"


def test_y():
    pass
