"""A stand-in for quadrants (Genesis-Embodied-AI/quadrants at efd3f69a) for the default spec's
smoke command and standalone repro: qd.init with the real signature and backend selection (an
unsupported arch falls back to the CPU with a warning unless enable_fallback=False, as
python/quadrants/lang/misc.py's adaptive_arch_select does), the keywords it accepts, and enough
of ndarrays and kernels to run test_ad_fibonacci's kernel on the host.

FAKE_QD_ARCHS: the supported archs, comma-separated (default "cpu,cuda").
FAKE_QD_INIT_LOG: a file that gets the init call as one JSON line.
"""

import json
import os
import sys


class Arch:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


cpu, cuda, amdgpu, metal, vulkan = (Arch(n) for n in ("cpu", "cuda", "amdgpu", "metal", "vulkan"))
f32, f64, i32, i64 = "f32", "f64", "i32", "i64"

# Keywords qd.init takes besides its named parameters: the CompileConfig fields and spec
# options the reference tests pass (the real list is longer; an unknown one is a KeyError).
_CONFIG_KEYS = {"ad_stack_experimental_enabled", "device_memory_GB", "cuda_stack_limit", "print_full_traceback",
                "debug", "offline_cache", "log_level", "kernel_profiler"}


def init(arch=None, default_fp=None, default_ip=None, _test_mode=False, enable_fallback=True,
         require_version=None, print_non_pure=False, src_ll_cache=True, **kwargs):
    unexpected = sorted(set(kwargs) - _CONFIG_KEYS)
    if unexpected:
        raise KeyError(f"Unrecognized keyword argument(s) for qd.init: {', '.join(unexpected)}")
    supported = os.environ.get("FAKE_QD_ARCHS", "cpu,cuda").split(",")
    wanted = arch if isinstance(arch, (list, tuple)) else [arch or cpu]
    chosen = next((a for a in wanted if a.name in supported), None)
    if chosen is None:
        if not enable_fallback:
            raise RuntimeError(f"Arch={wanted} is not supported")
        print(f"[W] Arch={wanted} is not supported, falling back to CPU", file=sys.stderr)
        chosen = cpu
    print(f"[Quadrants] Starting on arch={chosen.name}")
    log = os.environ.get("FAKE_QD_INIT_LOG")
    if log:
        with open(log, "a") as f:
            call = {"arch": chosen.name, "default_fp": default_fp, "enable_fallback": enable_fallback, **kwargs}
            f.write(json.dumps(call, sort_keys=True) + "\n")


def sync():
    pass


class _Ndarray:
    def __init__(self, dtype, shape, needs_grad=False):
        self._data = [0] * shape
        self.grad = _Ndarray(dtype, shape) if needs_grad else None

    def __getitem__(self, i):
        return self._data[i]

    def __setitem__(self, i, v):
        self._data[i] = v

    def fill(self, v):
        self._data = [v] * len(self._data)


def ndarray(dtype, shape, needs_grad=False):
    return _Ndarray(dtype, shape, needs_grad)


class types:
    @staticmethod
    def ndarray():
        return _Ndarray


class _Kernel:
    def __init__(self, fn):
        self._fn = fn

    def __call__(self, *args):
        return self._fn(*args)

    def grad(self, *args):
        pass  # the fake differentiates nothing


def kernel(fn):
    return _Kernel(fn)
