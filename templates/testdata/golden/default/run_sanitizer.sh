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

# The workflow step ran in the checkout; so does the rerun.
if [[ -n "${GITHUB_WORKSPACE:-}" ]]; then
  cd "$GITHUB_WORKSPACE"
fi

exec debugflow-step sanitize \
  --out /tmp/repro \
  --tool memcheck \
  --print-limit 100 \
  --max-tests 5 \
  --python python3 \
  --when always \
  -k cuda \
  "$@" \
  tests/python/test_ad_ndarray.py
