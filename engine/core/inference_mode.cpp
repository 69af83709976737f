#include "engine/core/inference_mode.h"

#include "base/error.h"
#include "engine/core/tensor.h"

namespace tinyddp {

namespace {
thread_local bool inference_mode_enabled = false;
}

bool InferenceMode::is_enabled() { return inference_mode_enabled; }
void InferenceMode::set_enabled(bool enabled) { inference_mode_enabled = enabled; }

void check_inference_inplace(const Tensor& t) {
  TINYDDP_CHECK(!t.defined() || !t.is_inference() || inference_mode_enabled,
                "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get "
                "a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
                "details.");
}

}  // namespace tinyddp
