# shellcheck shell=bash disable=SC2016,SC1003 # the quoted values are literal: nothing in them is meant to expand
# Load the job's environment into this shell: source /tmp/repro/env.sh
# Written by `debugflow-step stage`; run_reproducer.sh and run_sanitizer.sh set the same.
