# The layering rule, checked: each layer includes only itself and the layers below it.
#
#   base  <-  kernels  <-  engine  <-  dist, models  <-  apps  <-  bench
#                                                    <-  python (the binding, beside apps)
#
# dist/ and models/ stand side by side and include neither the other; within engine/, core/ is the bottom
# (Tensor, storage, dispatch) and includes nothing from autograd/ or ops/. tests/ may include every layer.
# Run: cmake -DROOT=<source dir> -P cmake/check_layers.cmake   (CTest: layering)
cmake_policy(VERSION 3.24)
if(NOT ROOT)
  message(FATAL_ERROR "check_layers: pass -DROOT=<tinyddp source directory>")
endif()

# The project directories a file of each layer may include from.
set(allowed_base base)
set(allowed_kernels base kernels)
set(allowed_engine base kernels engine)
set(allowed_engine_core base kernels engine/core)
set(allowed_dist base kernels engine dist)
set(allowed_models base kernels engine models)
set(allowed_apps base kernels engine dist models apps)
set(allowed_bench base kernels engine dist models bench)
set(allowed_python base kernels engine dist models python)
set(allowed_include base kernels engine dist models)   # the installed umbrella header
set(project_dirs base kernels engine dist models apps bench python tests include)

set(violations "")
set(checked 0)
foreach(layer base kernels engine engine_core dist models apps bench python include)
  string(REPLACE "_" "/" dir "${layer}")
  file(GLOB_RECURSE files "${ROOT}/${dir}/*.h" "${ROOT}/${dir}/*.cpp" "${ROOT}/${dir}/*.cu" "${ROOT}/${dir}/*.cuh")
  foreach(file IN LISTS files)
    file(RELATIVE_PATH rel "${ROOT}" "${file}")
    # engine/core/ has its own, stricter rule; the engine rule covers the rest of engine/.
    if(layer STREQUAL "engine" AND rel MATCHES "^engine/core/")
      continue()
    endif()
    math(EXPR checked "${checked} + 1")
    file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*" "\\1" target "${line}")
      string(REGEX MATCH "^[^/]+" top "${target}")
      if(NOT top IN_LIST project_dirs)
        continue()   # a system or third-party header
      endif()
      set(ok FALSE)
      foreach(prefix IN LISTS allowed_${layer})
        if(target MATCHES "^${prefix}/")
          set(ok TRUE)
        endif()
      endforeach()
      if(NOT ok)
        string(REPLACE ";" ", " may "${allowed_${layer}}")
        string(APPEND violations "  ${rel} includes \"${target}\" (${dir}/ may include: ${may})\n")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations)
  message(FATAL_ERROR "check_layers: includes that run against the layers (base <- kernels <- engine <- "
                      "dist, models <- apps <- bench):\n${violations}Move the code to the layer it needs, or "
                      "move what it needs down.")
endif()
message(STATUS "check_layers: ${checked} files, every include runs down the layers")
