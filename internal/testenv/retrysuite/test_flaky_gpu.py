"""test_once fails the first attempt of each repetition and passes when retried (its calls in
one worker alternate: a repetition and its retries run in the same worker); test_always fails
every attempt; test_plain passes."""
import pytest

_calls = [0]


@pytest.mark.flaky(retries=2)
def test_once():
    _calls[0] += 1
    assert _calls[0] % 2 == 0, "CUDA error: an illegal memory access was encountered"


@pytest.mark.flaky(retries=2)
def test_always():
    assert False, "CUDA error: misaligned address"


def test_plain():
    pass
