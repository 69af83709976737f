// Multi-task models: a shared trunk, one head per task, and the per-task losses of a batch, which a
// LossWeighting (models/weighting) turns into the one loss of a step.
//
//   SharedBottomMLP m(16, {64, 64});                         // trunk 16-64-64 (ReLU), regression + 3-class heads
//   std::vector<Tensor> L = m.task_losses({x, {y_reg, y_cls}});   // {mse, cross-entropy}
//   weighting->observe(L, m.last_shared_weight(), step);     // W: the trunk's last Linear's weight
//
//   MultiRegressionMLP toy(250, 100, 4, /*num_tasks=*/10);    // the GradNorm paper's toy network
//   std::vector<Tensor> L = toy.task_losses({x, {y}});       // y (N, T): L_i = mse(column i)
//
// Legend: N = batch, I = in_features, H = hidden width, C = classes, T = tasks, K = outputs per task.
// Parameter names (nn::Module): "trunk.0.weight", "trunk.0.bias", "trunk.2.weight", ... (a Linear at every even
// index, a ReLU after each), then the heads: "reg_head.*", "cls_head.*" or "head.*".
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/nn/nn.h"

namespace tinyddp::models {

// Inputs and the targets of each head; each model documents its targets.
struct MultiTaskBatch {
  Tensor x;                      // (N, I)
  std::vector<Tensor> targets;
};

class MultiTaskModel : public nn::Module {
 public:
  virtual int num_tasks() const = 0;
  virtual std::vector<std::string> task_names() const = 0;
  // One scalar loss per task, each with its graph back through the trunk (mean reduction).
  virtual std::vector<Tensor> task_losses(const MultiTaskBatch& batch) = 0;
  // W, GradNorm's shared layer: the weight of the trunk's last Linear, (H, H_prev). The registered handle.
  virtual Tensor last_shared_weight() const = 0;
  // The trunk's last Linear, whose weight that is (for a LinearTap: GradNorm's Gram-matrix norm).
  const std::shared_ptr<nn::Linear>& last_shared_layer() const { return last_shared_; }
  // The trunk's output, (N, H).
  Tensor features(const Tensor& x) { return (*trunk_)(x); }
  const std::shared_ptr<nn::Sequential>& trunk() const { return trunk_; }
  // A constructed fault for diagnostics (`tinyddp train --detach-task`, models/weighting/grad_report.h): the
  // heads of the tasks marked true read the trunk's output through .detach(), so their losses have no path
  // to the trunk (the head itself still trains). Empty (the default): every head reads the trunk.
  void set_detached_tasks(std::vector<bool> detached) { detached_tasks_ = std::move(detached); }
  bool task_detached(int task) const { return task < static_cast<int>(detached_tasks_.size()) && detached_tasks_[task]; }

 protected:
  // Registers "trunk": Linear(sizes[0], sizes[1]), ReLU, ..., Linear(sizes[n-2], sizes[n-1]), ReLU.
  void build_trunk(const std::vector<int64_t>& sizes, DType dtype);
  std::shared_ptr<nn::Sequential> trunk_;
  std::shared_ptr<nn::Linear> last_shared_;
  // The trunk output task `task`'s head reads: `h`, or h.detach() for a detached task.
  Tensor head_input(const Tensor& h, int task) const { return task_detached(task) ? h.detach() : h; }

 private:
  std::vector<bool> detached_tasks_;
};

// A shared-bottom MLP with a regression head (1 output, MSE) and a classification head (C classes,
// cross-entropy), like a recommender's two objectives.
// targets = {y_reg (N, 1), y_cls (N,) int64 in [0, C)}; task 0 = "regression", task 1 = "classification".
class SharedBottomMLP : public MultiTaskModel {
 public:
  // hidden: the trunk's widths (at least one). Init: each Linear's default (nn::Linear), in registration order.
  SharedBottomMLP(int64_t in_features, const std::vector<int64_t>& hidden, int64_t num_classes = 3,
                  DType dtype = DType::f32);
  int num_tasks() const override { return 2; }
  std::vector<std::string> task_names() const override { return {"regression", "classification"}; }
  std::vector<Tensor> task_losses(const MultiTaskBatch& batch) override;
  Tensor last_shared_weight() const override { return last_shared_->weight(); }
  std::string type_name() const override { return "SharedBottomMLP"; }

  // (N, 1) predictions and (N, C) logits.
  Tensor regression(const Tensor& features) { return (*reg_head_)(features); }
  Tensor logits(const Tensor& features) { return (*cls_head_)(features); }

 private:
  std::shared_ptr<nn::Linear> reg_head_;
  std::shared_ptr<nn::Linear> cls_head_;
};

// T regression tasks on one trunk (the GradNorm paper's toy problem: a 4-layer, 100-wide ReLU trunk and an
// affine head with T outputs). One head Linear(H, T K); task i's prediction is the column block
// [i K, (i + 1) K) (K = outputs_per_task, 1 by default: task i = output column i).
// targets = {y (N, T K)}; L_i = mse(prediction block i, y block i); tasks are named "task0", "task1", ...
class MultiRegressionMLP : public MultiTaskModel {
 public:
  MultiRegressionMLP(int64_t in_features, int64_t hidden, int num_layers, int num_tasks, int64_t outputs_per_task = 1,
                     DType dtype = DType::f32);
  int num_tasks() const override { return num_tasks_; }
  std::vector<std::string> task_names() const override;
  std::vector<Tensor> task_losses(const MultiTaskBatch& batch) override;
  Tensor last_shared_weight() const override { return last_shared_->weight(); }
  std::string type_name() const override { return "MultiRegressionMLP"; }
  // (N, T K): all tasks' predictions.
  Tensor forward(const Tensor& x) override { return (*head_)(features(x)); }

 private:
  int num_tasks_;
  int64_t outputs_per_task_;
  std::shared_ptr<nn::Linear> head_;
};

}  // namespace tinyddp::models
