#!/usr/bin/env bash
# shellcheck disable=SC2016,SC1003 # the quoted values are literal: nothing in them is meant to expand
# Rerun the reproducer with the flags and the environment of the workflow's reproduce step.
# Written by `debugflow-step stage`; edit freely.
#
# Usage: '/tmp/my repro'/run_reproducer.sh [COUNT] [MORE debugflow-step reproduce FLAGS...]
#   COUNT  repetitions of every test (pytest-repeat --count); default 7, this run's count
#   e.g.   ./run_reproducer.sh 10
#          ./run_reproducer.sh 10 --pytest-arg=-x
#          ./run_reproducer.sh 50 --stop-on-first-failure=false   # the full sweep
# It rewrites reproducer.log, reproducer_summary.json and xid_added.log in '/tmp/my repro'.
set -euo pipefail

# The job's environment as the workflow's stage step saw it: the spec's env, the variables its
# steps exported and their PATH. A variable already set in this shell keeps its value.
[[ -v QUADRANTS_CMAKE_ARGS ]] || export QUADRANTS_CMAKE_ARGS='-DQD_WITH_VULKAN:BOOL=OFF -DQD_WITH_CUDA:BOOL=ON'
[[ -v TRICKY ]] || export TRICKY='"""+__import__("os").system("touch PWNED")+""" `touch PWNED` $(touch PWNED) | '\'''\'''\'' \'
[[ -v EMPTY ]] || export EMPTY=''
export PATH='/opt/llvm 22/bin:/usr/bin'${PATH:+:$PATH}

count="${1:-7}"
if ! [[ "$count" =~ ^[1-9][0-9]*$ ]]; then
  echo "run_reproducer.sh: COUNT must be a positive integer, got '$count'" >&2
  echo "usage: $0 [COUNT] [MORE debugflow-step reproduce FLAGS...]" >&2
  exit 2
fi

# The workflow step ran in the checkout; so does the rerun.
cd '/home/runner/work/my project/it'\''s'

exec '/opt/debug flow/debugflow-step' reproduce \
  --out '/tmp/my repro' \
  --python /usr/bin/python3 \
  --workers 2 \
  --count "$count" \
  -k 'cuda and not slow' \
  --pytest-arg=--maxfail=1 \
  --pytest-arg=-p \
  --pytest-arg=no:cacheprovider \
  '--pytest-arg=$HOME' \
  --env=CUDA_LAUNCH_BLOCKING=1 \
  '--env=QD_ARGS=-a '\''b'\'' "c"' \
  --stop-on-first-failure \
  "${@:2}" \
  tests/python/test_a.py 'tests/it'\''s here/test_b.py'
