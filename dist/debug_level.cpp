#include "dist/debug_level.h"

#include <cctype>
#include <cstdlib>
#include <string>

#include "base/error.h"

namespace tinyddp::dist {

// As 1.13 reads it: unset is OFF; a set value is upper-cased and must then be OFF, INFO or DETAIL (so "info"
// is INFO, and an empty or padded value is refused). tests/golden/dist_debug_level.json has PyTorch's answers.
DebugLevel debug_level_from_env() {
  const char* v = std::getenv("TORCH_DISTRIBUTED_DEBUG");
  if (v == nullptr) return DebugLevel::off;
  std::string level(v);
  for (char& c : level) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (level == "OFF") return DebugLevel::off;
  if (level == "INFO") return DebugLevel::info;
  if (level == "DETAIL") return DebugLevel::detail;
  throw Error("The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL.");   // PyTorch's text
}

const char* debug_level_name(DebugLevel level) {
  return level == DebugLevel::detail ? "DETAIL" : level == DebugLevel::info ? "INFO" : "OFF";
}

}  // namespace tinyddp::dist
