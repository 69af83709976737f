# `cmake --install build [--prefix P]`: the headers under P/include/tinyddp/ (each layer at its source path,
# plus the umbrella <tinyddp/tinyddp.h>), the static libraries, the `tinyddp` command and a CMake package, so
# that a project outside this tree builds with
#   find_package(tinyddp REQUIRED)
#   target_link_libraries(app PRIVATE tinyddp::tinyddp)
# tests/install/check_install.cmake does exactly that against a scratch prefix (CTest install.consumer).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TINYDDP_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tinyddp)
set(TINYDDP_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/tinyddp)

# The layers, bottom first, each exported as tinyddp::<layer>.
set(tinyddp_exported base kernels_cpu kernels_cuda engine dist models trace_file)
set(tinyddp_export_targets "")
foreach(layer IN LISTS tinyddp_exported)
  if(TARGET tinyddp_${layer})
    set_target_properties(tinyddp_${layer} PROPERTIES EXPORT_NAME ${layer})
    list(APPEND tinyddp_export_targets tinyddp_${layer})
  endif()
endforeach()

# tinyddp::tinyddp is everything a program needs, with the umbrella header's directory.
add_library(tinyddp_all INTERFACE)
set_target_properties(tinyddp_all PROPERTIES EXPORT_NAME tinyddp)
target_link_libraries(tinyddp_all INTERFACE tinyddp_engine tinyddp_dist tinyddp_models tinyddp_trace_file)
target_include_directories(tinyddp_all INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>)
add_library(tinyddp::tinyddp ALIAS tinyddp_all)

# Installed headers are included as the sources include them ("engine/core/tensor.h"), so the layers'
# include directory is include/tinyddp; the umbrella is <tinyddp/tinyddp.h>, under include/.
install(TARGETS ${tinyddp_export_targets} tinyddp_all
        EXPORT tinyddpTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${TINYDDP_INSTALL_INCLUDEDIR} ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tinyddp RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY base kernels engine dist models
        DESTINATION ${TINYDDP_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(FILES include/tinyddp/tinyddp.h DESTINATION ${TINYDDP_INSTALL_INCLUDEDIR})
install(EXPORT tinyddpTargets NAMESPACE tinyddp:: DESTINATION ${TINYDDP_INSTALL_CMAKEDIR})

foreach(flag TINYDDP_HAVE_CUDA TINYDDP_HAVE_MPI TINYDDP_HAVE_NCCL)   # "" -> OFF in the generated config
  if(NOT ${flag})
    set(${flag} OFF)
  endif()
endforeach()
configure_package_config_file(cmake/tinyddpConfig.cmake.in ${PROJECT_BINARY_DIR}/tinyddpConfig.cmake
                              INSTALL_DESTINATION ${TINYDDP_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tinyddpConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tinyddpConfig.cmake ${PROJECT_BINARY_DIR}/tinyddpConfigVersion.cmake
        DESTINATION ${TINYDDP_INSTALL_CMAKEDIR})
