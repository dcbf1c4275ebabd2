#!/usr/bin/env bash
# shellcheck disable=SC2016 # the quoted flags are literal values: nothing in them is meant to expand
# Rerun compute-sanitizer (racecheck) with the flags of the workflow's sanitize step.
# Written by `debugflow-step stage`; edit freely.
#
# Usage: /tmp/my repro/run_sanitizer.sh [MORE debugflow-step sanitize FLAGS...]
#   e.g. ./run_sanitizer.sh --max-tests 1
# It runs the tests that failed in the last reproducer run (reproducer_summary.json in /tmp/my repro;
# run ./run_reproducer.sh first to refresh it), or the paths below when none failed: unlike the
# workflow step it always runs (--when always). It rewrites sanitizer.log and its summaries.
set -euo pipefail

# The workflow step ran in the checkout; so does the rerun.
if [[ -n "${GITHUB_WORKSPACE:-}" ]]; then
  cd "$GITHUB_WORKSPACE"
fi

exec '/opt/debug flow/debugflow-step' sanitize \
  --out '/tmp/my repro' \
  --tool racecheck \
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
