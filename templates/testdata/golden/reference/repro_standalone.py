#!/usr/bin/env python3
# Run the spec's reproducer.standalone.code outside pytest, so py-spy can watch one process.
# Written by `debugflow-step stage`; edit freely. Run it from anywhere:
#
#     python /tmp/repro/repro_standalone.py [ARGS...]
#     py-spy record --native -o profile.svg -- python /tmp/repro/repro_standalone.py
#     py-spy dump --native --pid <PID>        # while it hangs
#
# It first sets the job's environment (a variable already set wins), and faulthandler prints the
# Python stack of every thread to stderr every 15 seconds (REPRO_DUMP_AFTER=SECONDS; 0: off),
# so a hang shows where it sits even without py-spy.

import faulthandler
import os
import sys

# The job's environment as the workflow's stage step saw it.
JOB_ENV = [
    ("QD_OFFLINE_CACHE", "0"),
    ("QD_OFFLINE_CACHE_CLEANING_POLICY", "never"),
    ("QD_DEBUG_ADSTACK", "1"),
    ("PYTHONUNBUFFERED", "1"),
    ("PYTHONFAULTHANDLER", "1"),
    ("CUDA_LAUNCH_BLOCKING", "1"),
    ("QUADRANTS_CMAKE_ARGS", "-DQD_WITH_VULKAN:BOOL=OFF -DQD_WITH_CUDA:BOOL=ON -DQD_WITH_AMDGPU:BOOL=OFF -DQD_BUILD_TESTS:BOOL=OFF"),
    ("LLVM_DIR", "/home/runner/.cache/ti-build-cache/llvm-22.1.0-x86-202603120808"),
    ("BUILD_DIR", "/home/runner/work/quadrants/quadrants/_skbuild/linux-x86_64-3.10/cmake-build"),
]
for _name, _value in JOB_ENV:
    os.environ.setdefault(_name, _value)

# The checkout, where the workflow's steps ran; the interpreter that has the project.
CHECKOUT = "/home/runner/work/quadrants/quadrants"
PYTHON = "python"

faulthandler.enable()
if float(os.environ.get("REPRO_DUMP_AFTER", "15")) > 0:
    faulthandler.dump_traceback_later(float(os.environ.get("REPRO_DUMP_AFTER", "15")), repeat=True, file=sys.stderr)
if CHECKOUT and os.path.isdir(CHECKOUT):
    os.chdir(CHECKOUT)
    sys.path.insert(0, CHECKOUT)

# ---- reproducer.standalone.code of the spec, as written ----
import argparse

import quadrants as qd

ap = argparse.ArgumentParser()
ap.add_argument("--arch", default="cuda")
args = ap.parse_args()
qd.init(arch=getattr(qd, args.arch))
print("OK")
