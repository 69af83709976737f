#!/usr/bin/env bash
# Records the traces behind the pictures of docs/tracing.md and draws them into docs/img/:
#   trace-combined-loss.svg  iteration 2 of `tinyddp repro combined-loss` (the pattern DDP is built for)
#   trace-two-backward.svg   iteration 1 of `tinyddp repro two-backward` (marked ready twice)
#   trace-find-unused.svg    iteration 1 of `tinyddp repro find-unused` (no error; the second backward is ignored)
#   trace-overlap.svg        step 3 of bench_trace's wide MLP, 3 buckets: allreduce overlapping the backward
# The structure of each picture is deterministic; its timing is not. On a shared machine other processes'
# scheduling can stretch a run by milliseconds, so the recordings run at real-time priority when allowed
# (chrt, as root); the pictures in the repository were made so on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
tinyddp="$build/apps/tinyddp"
out=docs/img
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prio=()
if chrt -f 20 true 2>/dev/null; then prio=(chrt -f 20); fi

for run in combined-loss:2 two-backward:1 find-unused:1; do
  name=${run%%:*}
  iteration=${run##*:}
  "${prio[@]}" "$tinyddp" repro "$name" --trace "$tmp/$name.json" > /dev/null || [ $? -eq 1 ]   # 1: it raised
  "$tinyddp" trace-view "$tmp/$name.json" --svg "$out/trace-$name.svg" --iteration "$iteration"
done
"${prio[@]}" "$build/bench/bench_trace" --trace_out="$tmp/wide.json" > /dev/null
"$tinyddp" trace-view "$tmp/wide.json" --svg "$out/trace-overlap.svg" --iteration 3
