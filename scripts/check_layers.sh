#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Checks the one-way module arrows of docs/architecture.md on every
# `#include "..."` of the tree, and exits 1 listing each include that breaks
# them. A module may include itself, include/siftdb (the public API), outside
# libraries (absl, gtest, ...), and the modules below, transitively:
#
#   wal -> util                 filter -> util
#   table -> filter, util       db -> table, wal, filter, util
#   redis/client -> util        redis/bloom -> redis/client, util
#   redis/server -> redis/bloom, redis/client, util
#   redis/mirror -> filter, redis/client, util
#   db/mirror -> db, redis/mirror
#   util/testing -> util
#   c (the C API) -> the public API alone
#   tools, bench, fuzz, tests, examples -> anything built
#
# and two rules beside the arrows: db reaches db/mirror only through
# db/remote_mirror.h (so db includes nothing under db/mirror/), and of the
# library only redis/client includes hiredis.
#
# Usage: scripts/check_layers.sh [ROOT]   (default: the repository root)
set -euo pipefail
root=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}
cd "$root"

# Direct arrows; closure() below makes them transitive.
declare -A direct=(
  [util]=""
  [util/testing]="util"
  [wal]="util"
  [filter]="util"
  [table]="filter util"
  [db]="table wal filter util"
  [redis/client]="util"
  [redis/bloom]="redis/client util"
  [redis/server]="redis/bloom redis/client util"
  [redis/mirror]="filter redis/client util"
  [db/mirror]="db redis/mirror"
  [c]=""
)
# Folders whose files may include any module.
free_dirs=(tools bench fuzz tests examples)

closure() {  # prints the module and every module it reaches
  local -A seen=()
  local queue=("$1") m d
  while ((${#queue[@]})); do
    m=${queue[0]}
    queue=("${queue[@]:1}")
    [[ -n ${seen[$m]:-} ]] && continue
    seen[$m]=1
    for d in ${direct[$m]}; do queue+=("$d"); done
  done
  printf '%s\n' "${!seen[@]}"
}

declare -A allowed=()
for m in "${!direct[@]}"; do
  allowed[$m]=" $(closure "$m" | tr '\n' ' ') "
done

# The module a path belongs to: the longest listed folder that holds it;
# "free" for tools/bench/..., "public" for include/, "" for anything else.
module_of() {
  local path=$1 best="" m
  for m in "${!direct[@]}"; do
    if [[ $path == "$m"/* && ${#m} -gt ${#best} ]]; then best=$m; fi
  done
  if [[ -z $best ]]; then
    for m in "${free_dirs[@]}"; do
      [[ $path == "$m"/* ]] && best=free
    done
    [[ $path == include/* || $path == siftdb/* ]] && best=public
  fi
  printf '%s' "$best"
}

list_sources() {  # tracked and new files in a checkout, else every file
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -co --exclude-standard -- '*.h' '*.cc'
  else
    find . -path ./build -prune -o \( -name '*.h' -o -name '*.cc' \) \
      -type f -print | sed 's#^\./##'
  fi
}

failures=0
fail() {
  echo "check_layers: $1" >&2
  failures=$((failures + 1))
}

while IFS= read -r file; do
  from=$(module_of "$file")
  [[ $from == free || -z $from ]] && continue
  while IFS=: read -r line text; do
    if [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]]; then
      target=${BASH_REMATCH[1]}
      to=$(module_of "$target")
      case $to in
        public) continue ;;
        "") # An outside library's header (absl/, gtest/, ...) unless it
            # names a folder of this tree.
          top=${target%%/*}
          if [[ -d $top && $target == */* ]]; then
            fail "$file:$line: $from includes $target (not a library module)"
          fi
          continue ;;
        free) fail "$file:$line: $from includes $target (tools/tests/...)"
          continue ;;
      esac
      if [[ $from == public ]]; then
        fail "$file:$line: the public API includes internal $target"
        continue
      fi
      if [[ $from == db && $to == db/mirror ]]; then
        fail "$file:$line: db reaches db/mirror only through db/remote_mirror.h, not $target"
        continue
      fi
      if [[ $to != "$from" && ${allowed[$from]} != *" $to "* ]]; then
        fail "$file:$line: $from may not include $to ($target)"
      fi
    elif [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\<(hiredis[^\>]*)\> ]]; then
      [[ $from == redis/client ]] ||
        fail "$file:$line: only redis/client links hiredis, not $from"
    fi
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include' "$file" || true)
done < <(list_sources)

if ((failures)); then
  echo "check_layers: $failures include(s) break the module arrows (docs/architecture.md)" >&2
  exit 1
fi
echo "check_layers: ok"
