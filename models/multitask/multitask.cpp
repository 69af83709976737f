#include "models/multitask/multitask.h"

namespace tinyddp::models {

void MultiTaskModel::build_trunk(const std::vector<int64_t>& sizes, DType dtype) {
  TINYDDP_CHECK(sizes.size() >= 2, type_name(), ": the trunk needs at least one hidden layer (got widths for ",
                sizes.size() - 1, ").");
  trunk_ = register_module("trunk", std::make_shared<nn::Sequential>());
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    TINYDDP_CHECK(sizes[i] > 0 && sizes[i + 1] > 0, type_name(), ": layer widths must be positive.");
    last_shared_ = std::make_shared<nn::Linear>(sizes[i], sizes[i + 1], true, dtype);
    trunk_->push_back(last_shared_);
    trunk_->push_back(std::make_shared<nn::ReLU>());
  }
}

namespace {

void check_targets(const std::string& model, const MultiTaskBatch& batch, size_t expected, const char* what) {
  TINYDDP_CHECK(batch.x.defined(), model, ": the batch has no inputs x.");
  TINYDDP_CHECK(batch.targets.size() == expected, model, ": expected ", expected, " target tensor(s) (", what,
                "), got ", batch.targets.size(), ".");
}

}  // namespace

// ---- SharedBottomMLP ----

SharedBottomMLP::SharedBottomMLP(int64_t in_features, const std::vector<int64_t>& hidden, int64_t num_classes,
                                 DType dtype) {
  std::vector<int64_t> sizes{in_features};
  sizes.insert(sizes.end(), hidden.begin(), hidden.end());
  build_trunk(sizes, dtype);
  TINYDDP_CHECK(num_classes >= 2, "SharedBottomMLP: num_classes must be at least 2, got ", num_classes, ".");
  reg_head_ = register_module("reg_head", std::make_shared<nn::Linear>(sizes.back(), 1, true, dtype));
  cls_head_ = register_module("cls_head", std::make_shared<nn::Linear>(sizes.back(), num_classes, true, dtype));
}

std::vector<Tensor> SharedBottomMLP::task_losses(const MultiTaskBatch& batch) {
  check_targets(type_name(), batch, 2, "y_reg (N, 1) and y_cls (N,) int64");
  Tensor h = features(batch.x);   // (N, H)
  Tensor y_reg = batch.targets[0].dim() == 1 ? batch.targets[0].reshape({-1, 1}) : batch.targets[0];
  return {mse_loss(regression(head_input(h, 0)), y_reg), cross_entropy(logits(head_input(h, 1)), batch.targets[1])};
}

// ---- MultiRegressionMLP ----

MultiRegressionMLP::MultiRegressionMLP(int64_t in_features, int64_t hidden, int num_layers, int num_tasks,
                                       int64_t outputs_per_task, DType dtype)
    : num_tasks_(num_tasks), outputs_per_task_(outputs_per_task) {
  TINYDDP_CHECK(num_layers >= 1, "MultiRegressionMLP: num_layers must be at least 1, got ", num_layers, ".");
  TINYDDP_CHECK(num_tasks >= 1 && outputs_per_task >= 1, "MultiRegressionMLP: num_tasks and outputs_per_task must be "
                "at least 1, got ", num_tasks, " and ", outputs_per_task, ".");
  std::vector<int64_t> sizes{in_features};
  sizes.insert(sizes.end(), num_layers, hidden);
  build_trunk(sizes, dtype);
  head_ = register_module("head", std::make_shared<nn::Linear>(hidden, num_tasks * outputs_per_task, true, dtype));
}

std::vector<std::string> MultiRegressionMLP::task_names() const {
  std::vector<std::string> names;
  for (int i = 0; i < num_tasks_; ++i) names.push_back("task" + std::to_string(i));
  return names;
}

std::vector<Tensor> MultiRegressionMLP::task_losses(const MultiTaskBatch& batch) {
  check_targets(type_name(), batch, 1, "y (N, T * outputs_per_task)");
  const Tensor& y = batch.targets[0];
  const int64_t width = num_tasks_ * outputs_per_task_;
  TINYDDP_CHECK(y.dim() == 2 && y.size(1) == width, "MultiRegressionMLP: targets[0] must be (N, ", width,
                ") = (N, num_tasks * outputs_per_task), got ", shape_str(y.shape()), ".");
  const Tensor h = features(batch.x);                 // (N, H)
  const Tensor prediction = (*head_)(h);              // (N, T K)
  Tensor detached_prediction;                         // (N, T K), only when a task is detached
  std::vector<Tensor> losses;
  for (int i = 0; i < num_tasks_; ++i) {
    const int64_t start = i * outputs_per_task_;
    if (task_detached(i) && !detached_prediction.defined()) detached_prediction = (*head_)(h.detach());
    const Tensor& p = task_detached(i) ? detached_prediction : prediction;
    losses.push_back(mse_loss(p.narrow(1, start, outputs_per_task_), y.narrow(1, start, outputs_per_task_)));
  }
  return losses;
}

}  // namespace tinyddp::models
