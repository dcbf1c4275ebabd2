"""The fake project: importable once develop.sh has built _lib."""
import os

from ._lib import CMAKE_ARGS, TOOL  # noqa: F401  (ImportError: not built)


def init(arch):
    if arch == "cuda" and os.environ.get("FAKE_GPU") != "1":
        raise RuntimeError("cuInit failed: CUDA_ERROR_NO_DEVICE")
    print("%s init OK" % arch)
