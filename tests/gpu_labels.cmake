# ctest.gpu_label: the tests that need a CUDA device carry the label `gpu` and no other test does, so that
# scripts/test.sh can leave them out with one line where there is no device (`ctest -L gpu` runs them).
# Run with cmake -P: -DCTEST=path/to/ctest -DBUILD_DIR=dir
cmake_minimum_required(VERSION 3.19)
foreach(var CTEST BUILD_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "gpu_labels.cmake: pass -D${var}=...")
  endif()
endforeach()
execute_process(COMMAND "${CTEST}" --test-dir "${BUILD_DIR}" -N -L gpu OUTPUT_VARIABLE gpu)
execute_process(COMMAND "${CTEST}" --test-dir "${BUILD_DIR}" -N -LE gpu OUTPUT_VARIABLE other)
# The GPU tests: all of test_cuda, and test_kernels' CUDA multi-tensor kernels.
set(needs_gpu "Test +#[0-9]+: (test_cuda[.]|test_kernels[.]CudaMultiTensor[./])")
string(REGEX MATCHALL "${needs_gpu}" labelled "${gpu}")
string(REGEX MATCHALL "${needs_gpu}" unlabelled "${other}")
string(REGEX MATCHALL "Test +#[0-9]+: [^\n]+" all_labelled "${gpu}")
list(LENGTH labelled n_labelled)
list(LENGTH unlabelled n_unlabelled)
list(LENGTH all_labelled n_all)
if(n_labelled EQUAL 0 OR NOT n_unlabelled EQUAL 0 OR NOT n_all EQUAL n_labelled)
  message(FATAL_ERROR "expected every test_cuda.* and test_kernels.CudaMultiTensor/* test, and only those, labelled "
                      "gpu: ${n_labelled} labelled, ${n_unlabelled} without the label, ${n_all} labelled in all")
endif()
message(STATUS "${n_labelled} tests labelled gpu")
