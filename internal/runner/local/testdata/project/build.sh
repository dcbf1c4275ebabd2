#!/bin/bash
# ./build.sh --write-env=FILE writes what the build needs to FILE: source it, then ./develop.sh.
set -eo pipefail
file=${1#--write-env=}
[ -n "$file" ] && [ "$file" != "$1" ] || { echo "usage: ./build.sh --write-env=FILE" >&2; exit 2; }
root="$PWD/_build/linux-x86_64"
mkdir -p "$root"
cat > "$file" <<EOT
export FAKE_CMAKE_ARGS="-DFAKE_WITH_CUDA:BOOL=ON"
export FAKE_BUILD_ROOT="$root"
EOT
echo "wrote $file"
