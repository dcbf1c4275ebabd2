"""A slow suite for the cancellation tests: every test sleeps far longer
than the tests wait, so pytest is always mid-run when it is signalled."""
import time

import pytest


@pytest.mark.parametrize("i", range(4))
def test_sleep(i):
    print("sleeping", i, flush=True)
    time.sleep(60)
