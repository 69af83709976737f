#!/usr/bin/env bash
# Mutation check, run by hand: applies each one-line bug of a list (default scripts/mutations.txt; its header
# gives the format) to a scratch copy of the tree, one at a time, builds the test binaries it names and runs them,
# and prints a table: mutation, killed or SURVIVED, and the test that failed. Exit status 1 if any survived.
#
#   bash scripts/mutate.sh                      # every mutation
#   bash scripts/mutate.sh -k "ready order"     # only those whose name contains the text
#   bash scripts/mutate.sh -l my_mutations.txt  # another list
#
# The working tree is never modified: the scratch copy (the tracked and untracked, not ignored files) lives in
# build-mutate/src, with its own build directory build-mutate/src/build (CUDA and benchmarks off); each mutated
# file is restored from the working tree after its run, and on any exit. Where ccache is installed it is used,
# with CCACHE_BASEDIR above the checkout (unless set), so that the files a mutation does not touch compile once.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LIST="$ROOT/scripts/mutations.txt"
FILTER=""
while [ $# -gt 0 ]; do
  case "$1" in
    -k) FILTER="$2"; shift 2 ;;
    -l) LIST="$(realpath "$2")"; shift 2 ;;   # relative to the caller's directory
    *) echo "usage: mutate.sh [-k NAME_PART] [-l LIST]" >&2; exit 2 ;;
  esac
done
cd "$ROOT"
SCRATCH="$ROOT/build-mutate/src"
BUILD="$SCRATCH/build"
LOGS="$ROOT/build-mutate/logs"
TEST_TIMEOUT_S=300
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$ROOT")}"
fi

# ---- the scratch copy, refreshed from the working tree ----
mkdir -p "$SCRATCH" "$LOGS"
# Only files whose content differs are copied (with a new mtime, so ninja rebuilds them); the others are left alone.
git ls-files -co --exclude-standard -z | while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue
  if ! cmp -s "$f" "$SCRATCH/$f"; then
    mkdir -p "$SCRATCH/$(dirname "$f")"
    cp "$f" "$SCRATCH/$f"
  fi
done
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S "$SCRATCH" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTINYDDP_CUDA=OFF -DTINYDDP_BUILD_BENCH=OFF \
    >"$LOGS/configure.log"
fi

CURRENT=""   # the file mutated right now, relative to the root
# A plain cp (a new mtime, not the original's) so that ninja recompiles the restored file.
restore() {
  if [ -n "$CURRENT" ]; then cp "$ROOT/$CURRENT" "$SCRATCH/$CURRENT"; fi
  CURRENT=""
}
trap restore EXIT INT TERM

# Replaces the one occurrence of $2 in file $1 by $3 (literally). Fails unless it occurs exactly once.
apply() {
  python3 - "$1" "$2" "$3" <<'EOF'
import sys
path, old, new = sys.argv[1:4]
text = open(path).read()
n = text.count(old)
if n != 1:
    sys.exit(f"'{old}' occurs {n} times in {path}; it must occur once")
open(path, "w").write(text.replace(old, new))
EOF
}

# Runs one test binary from the scratch root (tests read tests/golden/...). Prints "" when it passed, else what
# failed: the first failing test (and how many more), or how the binary died.
run_binary() {
  local bin=$1 log=$2 rc=0
  (cd "$SCRATCH" && timeout "$TEST_TIMEOUT_S" "$BUILD/tests/$bin" >"$log" 2>&1) || rc=$?
  [ "$rc" -eq 0 ] && return 0
  local failed
  failed=$(grep '^\[  FAILED  \]' "$log" | grep -v 'listed below' | sed 's/^\[  FAILED  \] \([^ ,]*\).*/\1/' |
           sort -u || true)
  if [ -n "$failed" ]; then
    local n
    n=$(echo "$failed" | wc -l)
    echo "$bin: $(echo "$failed" | head -1)$([ "$n" -gt 1 ] && echo " (+$((n - 1)) more)")"
  elif [ "$rc" -eq 124 ]; then
    echo "$bin: timed out after ${TEST_TIMEOUT_S} s"
  else
    echo "$bin: exit status $rc ($(grep -m1 -iE 'error|abort|terminate|fault' "$log" | cut -c1-60))"
  fi
}

# ---- the unmutated tree must pass, or a kill means nothing ----
all_bins=$(grep -v '^\s*#' "$LIST" | grep ' @@ ' | awk -F ' @@ ' '{print $5}' | tr ' ' '\n' | sort -u | xargs)
echo "building the unmutated tests ($all_bins) in $BUILD ..." >&2
# shellcheck disable=SC2086
cmake --build "$BUILD" -j2 --target $all_bins >"$LOGS/build-base.log" 2>&1 || { echo "the unmutated tree does not build: $LOGS/build-base.log" >&2; exit 2; }
for bin in $all_bins; do
  why=$(run_binary "$bin" "$LOGS/base-$bin.log")
  [ -z "$why" ] || { echo "the unmutated tree fails: $why ($LOGS/base-$bin.log)" >&2; exit 2; }
done

# ---- one mutation at a time ----
rows=()
survived=0
i=0
while IFS= read -r line; do
  case "$line" in ''|'#'*) continue ;; esac
  IFS=$'\x01' read -r name file original replacement bins <<<"${line// @@ /$'\x01'}"
  [ -n "$FILTER" ] && [[ "$name" != *"$FILTER"* ]] && continue
  i=$((i + 1))
  log_base="$LOGS/m$i"
  echo "[$i] $name ($file) ..." >&2
  CURRENT="$file"
  if ! apply "$SCRATCH/$file" "$original" "$replacement" 2>"$log_base-apply.log"; then
    rows+=("$name|NOT APPLIED|$(cat "$log_base-apply.log")")
    restore
    survived=$((survived + 1))
    continue
  fi
  verdict="SURVIVED"
  by="-"
  # shellcheck disable=SC2086
  if ! cmake --build "$BUILD" -j2 --target $bins >"$log_base-build.log" 2>&1; then
    verdict="NOT BUILT"
    by="see $log_base-build.log"
  else
    for bin in $bins; do
      why=$(run_binary "$bin" "$log_base-$bin.log")
      if [ -n "$why" ]; then
        verdict="killed"
        by="$why"
        break
      fi
    done
  fi
  [ "$verdict" = "killed" ] || survived=$((survived + 1))
  rows+=("$name|$verdict|$by")
  restore
done <"$LIST"

# Rebuild the restored tree so that the next run starts from objects of the real code.
# shellcheck disable=SC2086
cmake --build "$BUILD" -j2 --target $all_bins >"$LOGS/build-restored.log" 2>&1 || true

printf '\n%-42s %-10s %s\n' "mutation" "result" "killed by"
printf '%-42s %-10s %s\n' "--------" "------" "---------"
for row in "${rows[@]}"; do
  IFS='|' read -r name verdict by <<<"$row"
  printf '%-42s %-10s %s\n' "$name" "$verdict" "$by"
done
echo
echo "$((${#rows[@]} - survived)) of ${#rows[@]} killed"
[ "$survived" -eq 0 ]
