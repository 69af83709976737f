#include "dist/allreduce_mean.h"

#include "engine/autograd/grad_mode.h"
#include "engine/ops/ops.h"

namespace tinyddp::dist {

std::function<void(std::vector<Tensor>&)> allreduce_mean_over(std::shared_ptr<ProcessGroup> pg) {
  return [pg](std::vector<Tensor>& tensors) {
    if (tensors.empty()) return;
    const double inv_world = 1.0 / pg->size();
    std::vector<Tensor> buffers;
    {
      NoGradGuard no_grad;
      for (const Tensor& t : tensors) buffers.push_back(t.detach().clone());   // contiguous copies
    }
    pg->allreduce(buffers)->wait();
    NoGradGuard no_grad;
    for (size_t i = 0; i < tensors.size(); ++i) {
      buffers[i].mul_(inv_world);
      if (!tensors[i].requires_grad()) {
        tensors[i].copy_(buffers[i]);
      } else {
        AutoGradMode grad_on(true);
        tensors[i] = tensors[i] + (buffers[i] - tensors[i].detach());
      }
    }
  };
}

}  // namespace tinyddp::dist
