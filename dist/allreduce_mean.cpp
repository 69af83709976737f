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

std::function<Tensor(const Tensor&)> allgather_rows_over(std::shared_ptr<ProcessGroup> pg) {
  return [pg](const Tensor& rows) {
    TINYDDP_CHECK(rows.dim() >= 1, "allgather_rows: expected a tensor of rows (at least 1-D), got a 0-d tensor.");
    NoGradGuard no_grad;
    const int world = pg->size();
    // 1. Every rank's shape, padded to 8 dims (-1 beyond its rank), so the check itself never mismatches.
    constexpr int64_t kMaxDims = 8;
    TINYDDP_CHECK(rows.dim() <= kMaxDims, "allgather_rows: at most ", kMaxDims, " dims, got ", rows.dim(), ".");
    std::vector<int64_t> mine(kMaxDims, -1);
    for (int64_t d = 0; d < rows.dim(); ++d) mine[d] = rows.size(d);
    std::vector<Tensor> shapes;
    for (int r = 0; r < world; ++r) shapes.push_back(zeros({kMaxDims}, DType::i64, rows.device()));
    pg->allgather(shapes, from_vector(mine, {kMaxDims}).to(rows.device()))->wait();
    auto shape_of = [&](int r) {
      Shape shape;
      for (int64_t d : shapes[r].to_vector<int64_t>()) {
        if (d >= 0) shape.push_back(d);
      }
      return shape;
    };
    for (int r = 1; r < world; ++r) {
      TINYDDP_CHECK(shape_of(r) == shape_of(0), "allgather_rows: every rank must pass the same shape, but rank ", r,
                    " passed ", shape_str(shape_of(r)), " and rank 0 ", shape_str(shape_of(0)),
                    ". Give every rank batches of the same size.");
    }
    // 2. The rows.
    std::vector<Tensor> outputs;
    for (int r = 0; r < world; ++r) outputs.push_back(empty(rows.shape(), rows.dtype(), rows.device()));
    pg->allgather(outputs, rows.detach().contiguous())->wait();
    return cat(outputs, 0);
  };
}

}  // namespace tinyddp::dist
