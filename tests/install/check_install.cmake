# Installs the build into a fresh prefix, then configures, builds and runs tests/install/consumer against
# it with find_package(tinyddp): the package is usable from outside the source tree.
# Run: cmake -DBUILD_DIR=<tinyddp build> -DWORK_DIR=<scratch> -DSOURCE_DIR=<tinyddp source> -P check_install.cmake
cmake_policy(VERSION 3.24)
foreach(var BUILD_DIR WORK_DIR SOURCE_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "check_install: pass -D${var}=...")
  endif()
endforeach()
set(prefix "${WORK_DIR}/prefix")
set(consumer_build "${WORK_DIR}/consumer-build")
file(REMOVE_RECURSE "${WORK_DIR}")

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "check_install: ${what} failed (exit ${rc}):\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run("cmake --install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(installed include/tinyddp/tinyddp.h include/tinyddp/engine/core/tensor.h lib/cmake/tinyddp/tinyddpConfig.cmake
                  bin/tinyddp)
  if(NOT EXISTS "${prefix}/${installed}")
    message(FATAL_ERROR "check_install: ${prefix}/${installed} was not installed")
  endif()
endforeach()
run("configuring the consumer" ${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/install/consumer" -B "${consumer_build}"
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run("building the consumer" ${CMAKE_COMMAND} --build "${consumer_build}")
run("running the consumer" "${consumer_build}/consumer")
message(STATUS "${last_output}")
run("running the installed tinyddp" "${prefix}/bin/tinyddp" repro --list)
if(NOT last_output MATCHES "two-backward")
  message(FATAL_ERROR "check_install: the installed tinyddp repro --list printed no scenario:\n${last_output}")
endif()
