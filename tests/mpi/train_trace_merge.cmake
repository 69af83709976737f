# mpi.train_trace_merge: `tinyddp train --backend mpi --trace` under mpirun writes one trace per rank, and
# `tinyddp trace-merge` joins them into one file holding both ranks on rank 0's clock. Run with cmake -P:
#   -DMPIEXEC=... -DNP_FLAG=-np -DTINYDDP=path/to/tinyddp -DOUT_DIR=dir
# Fails (FATAL_ERROR) on a failing command, a missing per-rank file, or a merged file without both ranks'
# training steps. The per-rank file names are rank_trace_path()'s: t.json -> t.rank0.json, t.rank1.json.
cmake_minimum_required(VERSION 3.19)   # string(JSON)

foreach(var MPIEXEC NP_FLAG TINYDDP OUT_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "train_trace_merge.cmake: pass -D${var}=...")
  endif()
endforeach()

file(REMOVE_RECURSE "${OUT_DIR}")
file(MAKE_DIRECTORY "${OUT_DIR}")
set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)

# 1. Train 3 steps on 2 MPI processes with --trace.
execute_process(
  COMMAND "${MPIEXEC}" --oversubscribe ${NP_FLAG} 2 "${TINYDDP}" train --experiment toy2 --weighting gradnorm
          --backend mpi --steps 3 --report-steps 0,3 --quiet --trace "${OUT_DIR}/t.json"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 100)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mpirun tinyddp train --trace failed (${rc}):\n${out}\n${err}")
endif()
foreach(rank 0 1)
  if(NOT EXISTS "${OUT_DIR}/t.rank${rank}.json")
    message(FATAL_ERROR "rank ${rank} wrote no trace: expected ${OUT_DIR}/t.rank${rank}.json\n${err}")
  endif()
endforeach()
if(EXISTS "${OUT_DIR}/t.json")
  message(FATAL_ERROR "under mpirun each rank writes t.rank<N>.json, not t.json")
endif()

# 2. Merge.
execute_process(
  COMMAND "${TINYDDP}" trace-merge -o "${OUT_DIR}/merged.json" "${OUT_DIR}/t.rank0.json" "${OUT_DIR}/t.rank1.json"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tinyddp trace-merge failed (${rc}):\n${out}\n${err}")
endif()

# 3. The merged file: 2 ranks, from both inputs, and each rank's 3 training steps (iteration spans 1..3).
file(READ "${OUT_DIR}/merged.json" merged)
string(JSON ranks GET "${merged}" otherData ranks)
string(JSON command GET "${merged}" otherData command)
string(JSON inputs LENGTH "${merged}" otherData merged_from)
if(NOT ranks EQUAL 2 OR NOT inputs EQUAL 2 OR NOT command STREQUAL "tinyddp train")
  message(FATAL_ERROR "merged trace: expected 2 ranks from 2 files of `tinyddp train`, got ranks=${ranks}, "
                      "merged_from has ${inputs}, command='${command}'")
endif()
string(JSON n LENGTH "${merged}" traceEvents)
math(EXPR last "${n} - 1")
set(iterations_0 0)
set(iterations_1 0)
set(hooks 0)
foreach(i RANGE ${last})
  string(JSON cat ERROR_VARIABLE no_cat GET "${merged}" traceEvents ${i} cat)
  if(no_cat)
    continue()   # metadata events have no category
  endif()
  if(cat STREQUAL "iteration")
    string(JSON pid GET "${merged}" traceEvents ${i} pid)
    math(EXPR iterations_${pid} "${iterations_${pid}} + 1")
  elseif(cat STREQUAL "hook")
    math(EXPR hooks "${hooks} + 1")
  endif()
endforeach()
if(NOT iterations_0 EQUAL 3 OR NOT iterations_1 EQUAL 3 OR hooks EQUAL 0)
  message(FATAL_ERROR "merged trace: expected 3 training steps per rank and DDP hooks; rank 0: ${iterations_0}, "
                      "rank 1: ${iterations_1}, hooks: ${hooks} (${n} events)")
endif()
message(STATUS "merged ${n} events: 3 steps on each of 2 ranks, ${hooks} hooks")
