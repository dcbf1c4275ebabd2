#!/bin/bash
# The build proper: it needs the variables of build.sh's env file (sourced in this shell) and the
# toolchain on PATH.
set -eo pipefail
if [ -z "$FAKE_CMAKE_ARGS" ] || [ -z "$FAKE_BUILD_ROOT" ]; then
  echo "develop.sh: FAKE_CMAKE_ARGS is not set: source the file of ./build.sh --write-env first" >&2
  exit 3
fi
tool=$(faketool --version)
mkdir -p "$FAKE_BUILD_ROOT/cmake-build"
printf 'CMAKE_ARGS = %s\nTOOL = %s\n' "'$FAKE_CMAKE_ARGS'" "'$tool'" > fakeproj/_lib.py
echo "built fakeproj with $FAKE_CMAKE_ARGS using $tool"
