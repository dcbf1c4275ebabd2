#!/usr/bin/env bash
# shellcheck disable=SC2016,SC1003 # the quoted values are literal: nothing in them is meant to expand
# Rerun compute-sanitizer (memcheck) with the flags and the environment of the workflow's
# sanitize step. Written by `debugflow-step stage`; edit freely.
#
# Usage: /tmp/repro/run_sanitizer.sh [MORE debugflow-step sanitize FLAGS...]
#   e.g. ./run_sanitizer.sh --max-tests 1
# It runs the tests that failed in the last reproducer run (reproducer_summary.json in the same
# folder; run ./run_reproducer.sh first to refresh it), or the paths below when none failed:
# unlike the workflow step it always runs (--when always). It rewrites sanitizer.log and its
# summaries.
set -euo pipefail

# The job's environment as the workflow's stage step saw it: the spec's env, the variables its
# steps exported and their PATH. A variable already set in this shell keeps its value.
[[ -v QD_OFFLINE_CACHE ]] || export QD_OFFLINE_CACHE=0
[[ -v QD_OFFLINE_CACHE_CLEANING_POLICY ]] || export QD_OFFLINE_CACHE_CLEANING_POLICY=never
[[ -v QD_DEBUG_ADSTACK ]] || export QD_DEBUG_ADSTACK=1
[[ -v PYTHONUNBUFFERED ]] || export PYTHONUNBUFFERED=1
[[ -v PYTHONFAULTHANDLER ]] || export PYTHONFAULTHANDLER=1
[[ -v CUDA_LAUNCH_BLOCKING ]] || export CUDA_LAUNCH_BLOCKING=1
[[ -v QUADRANTS_CMAKE_ARGS ]] || export QUADRANTS_CMAKE_ARGS='-DQD_WITH_VULKAN:BOOL=OFF -DQD_WITH_CUDA:BOOL=ON -DQD_WITH_AMDGPU:BOOL=OFF -DQD_BUILD_TESTS:BOOL=OFF'
[[ -v LLVM_DIR ]] || export LLVM_DIR=/home/runner/.cache/ti-build-cache/llvm-22.1.0-x86-202603120808
[[ -v BUILD_DIR ]] || export BUILD_DIR=/home/runner/work/quadrants/quadrants/_skbuild/linux-x86_64-3.10/cmake-build
export PATH=/home/runner/.cache/ti-build-cache/llvm-22.1.0-x86-202603120808/bin:/home/runner/go/bin:/usr/bin:/bin${PATH:+:$PATH}

# The workflow step ran in the checkout; so does the rerun.
cd /home/runner/work/quadrants/quadrants

exec debugflow-step sanitize \
  --out /tmp/repro \
  --tool memcheck \
  --print-limit 50 \
  --max-tests 5 \
  --python python \
  --when always \
  -k cuda \
  "$@" \
  tests/python/test_ad_ndarray.py
