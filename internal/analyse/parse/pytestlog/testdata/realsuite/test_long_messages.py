import pytest

LONG = "CUDA Error CUDA_ERROR_ILLEGAL_ADDRESS while calling cuStreamSynchronize (cuStreamSynchronize) in kernel ad_fibonacci_c80_0_kernel_0_range_for"

def test_runtime():
    raise RuntimeError(LONG)

def test_assert():
    x = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22]
    assert x == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 23]

def test_assert_msg():
    assert False, "the fibonacci gradient differs from the reference by more than the tolerance of 1e-6"

class TestK:
    @pytest.mark.parametrize("p", ["a"])
    def test_method(self, p):
        raise ValueError("a value error with a message long enough to be cut by the eighty column short summary")

@pytest.fixture
def broken():
    raise OSError("the fixture could not open /dev/nvidia0 because the device node is missing from the container")

def test_setup_error(broken):
    pass
