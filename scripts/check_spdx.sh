#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Every source file (C++, scripts, CMake) carries an SPDX licence line in its
# first lines (LICENSE: Apache-2.0). Exits 1 listing the files without one.
set -euo pipefail
root=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}
cd "$root"
missing=0
while IFS= read -r f; do
  if ! head -n 5 "$f" | grep -q 'SPDX-License-Identifier: Apache-2.0'; then
    echo "check_spdx: $f has no SPDX-License-Identifier line" >&2
    missing=$((missing + 1))
  fi
done < <(git ls-files -co --exclude-standard -- '*.cc' '*.h' '*.sh' \
           '*CMakeLists.txt' '*.cmake.in' '.ci/run' | grep -v '^build')
((missing == 0)) || exit 1
echo "check_spdx: ok"
