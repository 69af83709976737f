// tinyddp's version: the one place it is written (the top-level CMakeLists.txt reads it from here for the
// CMake package's version file).
#pragma once

#define TINYDDP_VERSION "0.1.0"
