"""A simulated crash suite for debugflow's experiment tests and benchmark.

test_kernel[cuda] fails on a share FAIL_RATE of its repetitions: a quarter of those failures
abort the xdist worker (os.abort(), like a CUDA illegal address taking the process down), the
rest fail an assertion. Which repetitions fail is pseudo-random but reproducible: a hash of
the experiment's ref name and round (DEBUGFLOW_EXPERIMENT_REF, DEBUGFLOW_EXPERIMENT_ROUND,
set by `debugflow experiment`), a seed (DEBUGFLOW_FLAKY_SEED, so a benchmark can average over
several) and the repetition id. test_ok never fails.

The module refuses to load unless the spec's build command ran in this checkout (built.txt).
"""
import hashlib
import os
import resource

import pytest

FAIL_RATE = 0.2
SEED = os.environ.get("DEBUGFLOW_FLAKY_SEED", "debugflow")

HERE = os.path.dirname(os.path.abspath(__file__))
if not os.path.exists(os.path.join(HERE, "built.txt")):
    raise RuntimeError("built.txt is missing: the spec's build command did not run in this checkout")


def _draw(name):
    key = "|".join([SEED, os.environ.get("DEBUGFLOW_EXPERIMENT_REF", ""),
                    os.environ.get("DEBUGFLOW_EXPERIMENT_ROUND", ""), name])
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") / 2.0**64


@pytest.mark.parametrize("device", ["cuda"])
def test_kernel(device, request):
    u = _draw(request.node.name)
    if u < FAIL_RATE / 4:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.abort()
    assert u >= FAIL_RATE, "wrong result (simulated memory corruption)"


def test_ok():
    pass
