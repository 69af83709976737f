# The docs and the README cite no machine paths (issue 14, point 13; the common rule): nothing under the
# top-level directories below, and of usr only /usr/bin/python3 (the torch interpreter) and /usr/local/cuda
# (where CMake looks for the CUDA toolkit by default, which the README names). Run with cmake -P -DROOT=...
cmake_minimum_required(VERSION 3.19)
file(GLOB docs ${ROOT}/docs/*.md)
list(APPEND docs ${ROOT}/README.md)
set(machine_roots work home tmp root usr)   # an absolute path starting /<one of these>/
list(JOIN machine_roots "|" roots)
set(bad "")
foreach(doc ${docs})
  file(STRINGS ${doc} lines)
  foreach(line IN LISTS lines)
    string(REPLACE "/usr/bin/python3" "" rest "${line}")
    string(REPLACE "/usr/local/cuda" "" rest "${rest}")
    if(rest MATCHES "(^|[ `(\"'])/(${roots})/")
      string(APPEND bad "${doc}: ${line}\n")
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "machine paths in the docs:\n${bad}")
endif()
list(LENGTH docs n)
message(STATUS "ok: ${n} files without machine paths")
