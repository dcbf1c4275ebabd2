#!/bin/bash
# Unpacks the fake toolchain into .toolchain and prints its folder on the last line (the lines
# before are progress, as download_llvm.py prints).
set -eo pipefail
echo "fetching faketool 1.0"
dir="$PWD/.toolchain"
mkdir -p "$dir/bin"
printf '#!/bin/sh\necho "faketool 1.0 ($0)"\n' > "$dir/bin/faketool"
chmod +x "$dir/bin/faketool"
echo "$dir"
