#include "dist/debug_level.h"

#include <cstdlib>
#include <string>

#include "base/error.h"

namespace tinyddp::dist {

DebugLevel debug_level_from_env() {
  const char* v = std::getenv("TORCH_DISTRIBUTED_DEBUG");
  if (v == nullptr || std::string(v).empty() || std::string(v) == "OFF") return DebugLevel::off;
  if (std::string(v) == "INFO") return DebugLevel::info;
  if (std::string(v) == "DETAIL") return DebugLevel::detail;
  throw Error("The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL.");   // PyTorch's text
}

const char* debug_level_name(DebugLevel level) {
  return level == DebugLevel::detail ? "DETAIL" : level == DebugLevel::info ? "INFO" : "OFF";
}

}  // namespace tinyddp::dist
