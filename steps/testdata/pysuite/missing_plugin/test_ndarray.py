import pytest


@pytest.mark.parametrize("arch", ["cpu", "cuda"])
def test_grad(arch):
    pass
