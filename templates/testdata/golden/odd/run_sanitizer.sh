#!/usr/bin/env bash
# shellcheck disable=SC2016,SC1003 # the quoted values are literal: nothing in them is meant to expand
# Rerun compute-sanitizer (racecheck, then memcheck, then initcheck) with the flags and the environment of the workflow's
# sanitize step. Written by `debugflow-step stage`; edit freely.
#
# Usage: '/tmp/my repro'/run_sanitizer.sh [MORE debugflow-step sanitize FLAGS...]
#   e.g. ./run_sanitizer.sh --max-tests 1
# It runs the tests that failed in the last reproducer run (reproducer_summary.json in the same
# folder; run ./run_reproducer.sh first to refresh it), or the paths below when none failed:
# unlike the workflow step it always runs (--when always). It rewrites sanitizer.log and its
# summaries.
set -euo pipefail

# The job's environment as the workflow's stage step saw it: the spec's env, the variables its
# steps exported and their PATH. A variable already set in this shell keeps its value.
[[ -v QUADRANTS_CMAKE_ARGS ]] || export QUADRANTS_CMAKE_ARGS='-DQD_WITH_VULKAN:BOOL=OFF -DQD_WITH_CUDA:BOOL=ON'
[[ -v TRICKY ]] || export TRICKY='"""+__import__("os").system("touch PWNED")+""" `touch PWNED` $(touch PWNED) | '\'''\'''\'' \'
[[ -v EMPTY ]] || export EMPTY=''
export PATH='/opt/llvm 22/bin:/usr/bin'${PATH:+:$PATH}

# The workflow step ran in the checkout; so does the rerun.
cd '/home/runner/work/my project/it'\''s'

exec '/opt/debug flow/debugflow-step' sanitize \
  --out '/tmp/my repro' \
  --tool racecheck \
  --tool memcheck \
  --tool initcheck \
  --leak-check \
  --print-limit 0 \
  --max-tests 2 \
  --sanitizer-arg=--target-processes=all \
  --sanitizer-arg=--racecheck-report \
  --sanitizer-arg=hazard \
  --python /usr/bin/python3 \
  --when always \
  -k 'cuda and not slow' \
  "$@" \
  tests/python/test_a.py 'tests/it'\''s here/test_b.py'
