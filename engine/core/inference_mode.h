// Inference mode (torch.inference_mode): a per-thread flag, as c10::InferenceMode's.
//
//   InferenceMode::set_enabled(true);    // the Python front end also turns grad mode off, as PyTorch does
//   Tensor y = x * 2;                    // y.is_inference(): allocated while the mode was on
//   InferenceMode::set_enabled(false);
//   y.add_(1);                           // raises "Inplace update to inference tensor outside InferenceMode ..."
//
// Tensors allocated while the mode is on are inference tensors, and so is every view of one (detach() too);
// a view of a normal tensor stays normal. Outside the mode an inference tensor cannot be modified in place (the
// version bump raises, after the write, as PyTorch's) or made to require grad, with PyTorch 1.13's texts. (PyTorch also refuses to save one for backward; tinyddp's
// engine does not check that.)
#pragma once

namespace tinyddp {

class Tensor;

struct InferenceMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// Throws PyTorch's RuntimeError when `t` is an inference tensor and inference mode is off: Tensor::bump_version
// checks it, so an in-place op writes, then raises, as PyTorch's version bump does.
void check_inference_inplace(const Tensor& t);

}  // namespace tinyddp
