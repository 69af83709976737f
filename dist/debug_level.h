// TORCH_DISTRIBUTED_DEBUG, the variable PyTorch users already know: OFF, INFO or DETAIL. At INFO and DETAIL
// the reducer's errors name parameters, not only their indices.
#pragma once

namespace tinyddp::dist {

enum class DebugLevel { off, info, detail };
DebugLevel debug_level_from_env();   // reads TORCH_DISTRIBUTED_DEBUG; unset or empty means off
const char* debug_level_name(DebugLevel level);

}  // namespace tinyddp::dist
