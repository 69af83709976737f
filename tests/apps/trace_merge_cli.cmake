# cli.trace_merge: `tinyddp trace-merge -o OUT IN...` never writes over an input. The old form, whose first
# argument was the output (`trace-merge t.rank0.json t.rank1.json` overwrote rank 0's trace, issue 14), an
# -o naming an input, and a single input are each refused with exit code 2 and the inputs left as they
# were; two inputs and a new -o merge. Run with cmake -P: -DTINYDDP=path/to/tinyddp -DOUT_DIR=dir
cmake_minimum_required(VERSION 3.19)   # string(JSON)

foreach(var TINYDDP OUT_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "trace_merge_cli.cmake: pass -D${var}=...")
  endif()
endforeach()
file(REMOVE_RECURSE "${OUT_DIR}")
file(MAKE_DIRECTORY "${OUT_DIR}")

# Two one-event rank traces, as `--trace` writes them under mpirun (the fields trace-merge reads).
foreach(rank 0 1)
  math(EXPR ts "100 + ${rank} * 50")
  string(CONCAT rank_trace_${rank} "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"step\", \"cat\": \"iteration\", \"pid\": ${rank}, "
                         "\"tid\": 0, \"ts\": ${ts}, \"dur\": 10}], \"otherData\": {\"clock_sync_us\": ${ts}, "
                         "\"rank\": ${rank}, \"command\": \"tinyddp train\"}}\n")
  file(WRITE "${OUT_DIR}/t.rank${rank}.json" "${rank_trace_${rank}}")
endforeach()

function(expect_refused why expected_message)
  execute_process(COMMAND "${TINYDDP}" trace-merge ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 60)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "^tinyddp: error: trace-merge: ${expected_message}")
    message(FATAL_ERROR "${why}: trace-merge ${ARGN} must be refused (exit 2, 'trace-merge: ${expected_message}'); "
                        "got exit ${rc}:\n${out}\n${err}")
  endif()
  foreach(rank 0 1)
    file(READ "${OUT_DIR}/t.rank${rank}.json" now)
    if(NOT now STREQUAL rank_trace_${rank})
      message(FATAL_ERROR "${why}: trace-merge ${ARGN} changed t.rank${rank}.json:\n${now}")
    endif()
  endforeach()
  message(STATUS "refused (${why}): ${err}")
endfunction()

expect_refused("output first, the old form" "name the merged file with -o OUT" "${OUT_DIR}/t.rank0.json"
               "${OUT_DIR}/t.rank1.json")
expect_refused("-o names an input" "the output -o '.*t.rank0.json' is also an input" -o "${OUT_DIR}/t.rank0.json"
               "${OUT_DIR}/t.rank0.json" "${OUT_DIR}/t.rank1.json")
expect_refused("-o names an input, spelled differently" "the output -o .* is also an input" -o
               "${OUT_DIR}/./t.rank1.json" "${OUT_DIR}/t.rank0.json" "${OUT_DIR}/t.rank1.json")
expect_refused("one input" "got one input" -o "${OUT_DIR}/t.json" "${OUT_DIR}/t.rank0.json")

execute_process(COMMAND "${TINYDDP}" trace-merge -o "${OUT_DIR}/t.json" "${OUT_DIR}/t.rank0.json" "${OUT_DIR}/t.rank1.json"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "trace-merge -o t.json t.rank0.json t.rank1.json failed (${rc}):\n${out}\n${err}")
endif()
file(READ "${OUT_DIR}/t.json" merged)
string(JSON ranks GET "${merged}" otherData ranks)
string(JSON events LENGTH "${merged}" traceEvents)
if(NOT ranks EQUAL 2 OR NOT events EQUAL 2)
  message(FATAL_ERROR "the merged trace should hold 2 ranks' 2 events, got ranks=${ranks}, ${events} events")
endif()
message(STATUS "merged: ${err}")
