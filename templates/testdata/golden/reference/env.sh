# shellcheck shell=bash disable=SC2016,SC1003 # the quoted values are literal: nothing in them is meant to expand
# Load the job's environment into this shell: source /tmp/repro/env.sh
# Written by `debugflow-step stage`; run_reproducer.sh and run_sanitizer.sh set the same.

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
