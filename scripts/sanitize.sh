#!/usr/bin/env bash
# The tests under sanitizers, as CI runs them after scripts/test.sh (.ci/run):
#   build-asan/  AddressSanitizer + UndefinedBehaviorSanitizer: the CPU GoogleTest suites (engine, kernels,
#                models, dist, apps) and the mpi backend's tests under mpirun
#   build-tsan/  ThreadSanitizer: test_threads, the thread backend's tests (ranks as threads: the allreduce,
#                faults, DDP equivalence, the reducer's waits) and the engine's determinism tests (concurrent graphs)
# CUDA and the benchmarks are off and only these test binaries are built, at -O1 -g1 (enough for a
# sanitizer's report, cheaper to compile: CI has 2 cores and a clean clone). Open MPI's own leaks and races
# are suppressed (scripts/sanitizers/); tinyddp's never are. Any report fails the script.
# Environment: JOBS (default 2), ASAN_DIR (default build-asan), TSAN_DIR (default build-tsan).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-2}
asan_dir=${ASAN_DIR:-build-asan}
tsan_dir=${TSAN_DIR:-build-tsan}
supp=$PWD/scripts/sanitizers
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# GCC 12 misfires -Wrestrict and -Wmaybe-uninitialized on instrumented std::string and std::vector code.
configure() {   # DIR SANITIZER_FLAGS
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE= -DTINYDDP_CUDA=OFF -DTINYDDP_BUILD_BENCH=OFF \
    -DCMAKE_CXX_FLAGS="-O1 -g1 -fno-omit-frame-pointer -Wno-restrict -Wno-maybe-uninitialized $2" \
    -DCMAKE_C_FLAGS="$2" \
    -DCMAKE_EXE_LINKER_FLAGS="$2" -DCMAKE_SHARED_LINKER_FLAGS="$2" > /dev/null
}

step() { echo "sanitize: $* ($(date +%T))"; }

step "ASan+UBSan: configure and build the CPU test suites"
# UBSan's null and alignment checks are left out: they instrument every reference binding and member access,
# which in this template-heavy code more than doubles UBSan's compile time (train_report.cpp at -O1: 22.6 s of
# CPU with them alone, 10.2 s with no sanitizer), and CI has 2 cores. ASan still reports a null dereference.
configure "$asan_dir" "-fsanitize=address,undefined -fno-sanitize=null,alignment -fno-sanitize-recover=undefined"
targets=(test_engine test_kernels test_models test_dist test_apps)
mpi=""
if grep -q 'mpi\.two_ranks' "$asan_dir/tests/CTestTestfile.cmake"; then   # configured with Open MPI
  targets+=(test_mpi)
  mpi=yes
fi
cmake --build "$asan_dir" -j "$jobs" --target "${targets[@]}" | { grep -v '^\[' || true; }
step "ASan+UBSan: run"
# Each suite as one process (not one per test through CTest): the same tests, without 1000 sanitizer start-ups.
# From the source root, where the tests read tests/golden/.
export ASAN_OPTIONS=detect_leaks=1:strict_init_order=1 LSAN_OPTIONS=suppressions=$supp/lsan.supp
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for t in test_engine test_kernels test_models test_dist test_apps; do
  "$asan_dir/tests/$t" --gtest_brief=1
done
if [ -n "$mpi" ]; then
  # LeakSanitizer off here only: Open MPI's plugins (loaded and unloaded by Open MPI and PMIx themselves) leave
  # allocations whose stacks end in "<unknown module>", which no suppression can name. ASan and UBSan still
  # check every access; tinyddp's own leaks are checked by the five suites above, in one process each.
  ASAN_OPTIONS=detect_leaks=0 mpirun --oversubscribe -np 2 -x ASAN_OPTIONS "$asan_dir/tests/test_mpi" --gtest_brief=1
fi

step "TSan: configure and build the thread-backend and determinism tests"
configure "$tsan_dir" "-fsanitize=thread"
cmake --build "$tsan_dir" -j "$jobs" --target test_threads | { grep -v '^\[' || true; }   # tests/CMakeLists.txt
step "TSan: run"
export TSAN_OPTIONS="suppressions=$supp/tsan.supp halt_on_error=1 second_deadlock_stack=1"
"$tsan_dir/tests/test_threads" --gtest_brief=1
step "done: no sanitizer reports"
