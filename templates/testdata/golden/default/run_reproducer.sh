#!/usr/bin/env bash
# shellcheck disable=SC2016,SC1003 # the quoted values are literal: nothing in them is meant to expand
# Rerun the reproducer with the flags and the environment of the workflow's reproduce step.
# Written by `debugflow-step stage`; edit freely.
#
# Usage: /tmp/repro/run_reproducer.sh [COUNT] [MORE debugflow-step reproduce FLAGS...]
#   COUNT  repetitions of every test (pytest-repeat --count); default 50, this run's count
#   e.g.   ./run_reproducer.sh 10
#          ./run_reproducer.sh 10 --pytest-arg=-x
# It rewrites reproducer.log, reproducer_summary.json and xid_added.log in /tmp/repro.
set -euo pipefail

count="${1:-50}"
if ! [[ "$count" =~ ^[1-9][0-9]*$ ]]; then
  echo "run_reproducer.sh: COUNT must be a positive integer, got '$count'" >&2
  echo "usage: $0 [COUNT] [MORE debugflow-step reproduce FLAGS...]" >&2
  exit 2
fi

# The workflow step ran in the checkout; so does the rerun.
if [[ -n "${GITHUB_WORKSPACE:-}" ]]; then
  cd "$GITHUB_WORKSPACE"
fi

exec debugflow-step reproduce \
  --out /tmp/repro \
  --python python3 \
  --workers 8 \
  --count "$count" \
  -k cuda \
  "${@:2}" \
  tests/python/test_ad_ndarray.py
