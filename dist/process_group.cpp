#include "dist/process_group.h"

namespace tinyddp::dist {

void check_collective_tensors(const std::vector<Tensor>& tensors, const char* collective) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    TINYDDP_CHECK(t.defined(), collective, ": tensor ", i, " is undefined.");
    TINYDDP_CHECK(t.dtype() == tensors[0].dtype(), collective, ": tensor ", i, " is ", dtype_name(t.dtype()),
                  " but tensor 0 is ", dtype_name(tensors[0].dtype()),
                  "; one call reduces one dtype (pack tensors of each dtype into their own call).");
    TINYDDP_CHECK(t.dtype() != DType::b8, collective, ": tensor ", i, " is bool; collectives reduce numbers. "
                  "Convert it first (t.to(DType::i64)) and compare the result.");
    TINYDDP_CHECK(t.is_contiguous(), collective, ": tensor ", i, " of shape ", shape_str(t.shape()),
                  " is not contiguous; collectives work on flat buffers. Pass t.contiguous() and copy back.");
    TINYDDP_CHECK(!t.requires_grad(), collective, ": tensor ", i,
                  " requires grad; collectives are not recorded by autograd. Pass t.detach().");
  }
}

void check_host_tensors(const std::vector<Tensor>& tensors, const char* collective, const char* backend) {
  for (size_t i = 0; i < tensors.size(); ++i)
    TINYDDP_CHECK(tensors[i].device().is_cpu(), collective, " on the ", backend, " backend: tensor ", i, " is on ",
                  tensors[i].device().str(), ", but this backend reduces host memory. Use the nccl backend for GPU "
                  "tensors, or move them with .to(Device::cpu()).");
}

}  // namespace tinyddp::dist
