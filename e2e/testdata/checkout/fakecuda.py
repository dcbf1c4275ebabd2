"""The project's GPU backend initialisation, as the smoke test calls it.

FAKE_CUDA_INIT=fail makes it fail the way a runner without a usable GPU does.
"""
import os
import sys


def init():
    if os.environ.get("FAKE_CUDA_INIT") == "fail":
        print("[E cuda_driver.h:operator()@93] CUDA Error CUDA_ERROR_NO_DEVICE while calling cuInit", file=sys.stderr)
        raise RuntimeError("cuInit failed: CUDA_ERROR_NO_DEVICE")
    print("cuda init OK (QD_OFFLINE_CACHE=%s)" % os.environ.get("QD_OFFLINE_CACHE"))
