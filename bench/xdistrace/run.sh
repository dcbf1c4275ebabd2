#!/usr/bin/env bash
# The xdist crash race (pytest-xdist #204) with and without debugflow's worker record plugin,
# which ignores execnet's "cannot send (already closed?)" when the controller hands tests to a
# worker that died (docs/evidence.md). A 300-test suite where every other test aborts its
# worker on the same 20 ms boundary, so two workers often die together, run RUNS times each
# way with pytest -n 2. Prints how many runs ended in an INTERNALERROR (exit 3) and how many
# counted all 300 tests. Usage: bash bench/xdistrace/run.sh [RUNS] [PYTHON]
set -euo pipefail
runs=${1:-20}
py=${2:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/../../steps/workerlog_plugin.py" "$work/debugflow_worker_log.py"
cat >"$work/test_race.py" <<'PY'
import os
import time

import pytest


@pytest.mark.parametrize("i", range(300))
def test_sync_crash(i):
    if i % 2 == 1:
        time.sleep(0.02 - time.time() % 0.02)
        os.abort()
PY
cd "$work"
for mode in without with; do
  plugin=()
  [ "$mode" = with ] && plugin=(-p debugflow_worker_log)
  internal=0 complete=0
  for _ in $(seq 1 "$runs"); do
    rc=0
    PYTHONPATH="$work" "$py" -m pytest -q -n 2 --max-worker-restart=1000 -p no:cacheprovider "${plugin[@]}" test_race.py >out.txt 2>&1 || rc=$?
    [ "$rc" = 3 ] && internal=$((internal + 1))
    tail -n 1 out.txt | grep -q "150 failed, 150 passed" && complete=$((complete + 1))
  done
  echo "$mode the plugin: $internal of $runs runs ended in an INTERNALERROR, $complete counted all 300 tests"
done
