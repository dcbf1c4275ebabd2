#!/usr/bin/env bash
# shellcheck disable=SC2016,SC1003 # the quoted values are literal: nothing in them is meant to expand
# Rerun the reproducer with the flags and the environment of the workflow's reproduce step.
# Written by `debugflow-step stage`; edit freely.
#
# Usage: /tmp/repro/run_reproducer.sh [COUNT] [MORE debugflow-step reproduce FLAGS...]
#   COUNT  repetitions of every test (pytest-repeat --count); default 50, this run's count
#   e.g.   ./run_reproducer.sh 10
#          ./run_reproducer.sh 10 --pytest-arg=-x
#          ./run_reproducer.sh 50 --stop-on-first-failure=false   # the full sweep
# It rewrites reproducer.log, reproducer_summary.json and xid_added.log in /tmp/repro.
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

count="${1:-50}"
if ! [[ "$count" =~ ^[1-9][0-9]*$ ]]; then
  echo "run_reproducer.sh: COUNT must be a positive integer, got '$count'" >&2
  echo "usage: $0 [COUNT] [MORE debugflow-step reproduce FLAGS...]" >&2
  exit 2
fi

# The workflow step ran in the checkout; so does the rerun.
cd /home/runner/work/quadrants/quadrants

exec debugflow-step reproduce \
  --out /tmp/repro \
  --python python \
  --workers 8 \
  --count "$count" \
  -k cuda \
  --stop-on-first-failure \
  "${@:2}" \
  tests/python/test_ad_ndarray.py
