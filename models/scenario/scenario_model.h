// The model behind `tinyddp repro`: a shared trunk and three task heads, as in the classic multi-task
// DDP error reports. Parameter indices (PyTorch's order, which DDP's messages print):
//
//   [unused_scale]     (1)      only with extra_unused_parameter: registered first, never used
//   0 trunk.0.weight   (8, 4)   trunk = Linear(4, 8) -> ReLU -> Linear(8, 8)
//   1 trunk.0.bias     (8)
//   2 trunk.2.weight   (8, 8)
//   3 trunk.2.bias     (8)
//   4 head_a.weight    (1, 8)   task a: regression, MSE
//   5 head_a.bias      (1)
//   6 head_b.weight    (3, 8)   task b: 3 classes, cross-entropy
//   7 head_b.bias      (3)
//   8 text_decoder.weight (5, 8)   task t: MSE; in the story task b's loss is b + t and task a never
//   9 text_decoder.bias   (5)      touches the text decoder
//
//   [feature_scale]      (8)    a buffer, only with ScenarioModelOptions::buffer: h = trunk(x) * feature_scale
//                                (ones, so values are those of the model without it)
//
// B = 6 rows per micro-batch, per rank.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/nn/nn.h"

namespace tinyddp::models {

// What the text decoder does in a forward (the plan language's forward(...)).
enum class TextMode {
  normal,      // returns a, b, t
  no_text,     // the text decoder is not called; returns a, b
  drop_text,   // the text decoder runs but its output is dropped; returns a, b
  detach,      // returns a, b, t with head_b and the text decoder reading the trunk's output detached
};

// How trunk.2 runs (the plan language's forward(ckpt) and forward(ckpt_nr)).
enum class Checkpointing { none, reentrant, non_reentrant };

// One forward of the plan language: forward(FLAG, ...).
struct ScenarioForward {
  TextMode text = TextMode::normal;
  Checkpointing checkpoint = Checkpointing::none;   // trunk.2 under autograd::checkpoint
  bool reuse = false;      // trunk.2 applied twice, shared weights: h = L2(relu(L2(relu(L0(x)))))
  bool features = false;   // also return the trunk features h, as the last output
};

struct ScenarioModelOptions {
  bool extra_unused_parameter = false;   // `unused_scale`, registered first (index 0)
  bool buffer = false;                   // the `feature_scale` buffer, read by every forward
};

class ScenarioModel : public nn::Module {
 public:
  explicit ScenarioModel(ScenarioModelOptions options = {});
  explicit ScenarioModel(bool extra_unused_parameter) : ScenarioModel(ScenarioModelOptions{extra_unused_parameter}) {}
  // Outputs: a (B, 1), b (B, 3), t (B, 5) unless the text mode drops it, then h (B, 8) with `features`.
  // With checkpointing, each application of trunk.2 is checkpointed on its own.
  std::vector<Tensor> forward(const Tensor& x, const ScenarioForward& how);
  std::vector<Tensor> forward(const Tensor& x, TextMode mode) { return forward(x, ScenarioForward{mode}); }
  std::string type_name() const override { return "ScenarioModel"; }

  Tensor unused_scale;
  Tensor feature_scale;   // a buffer
  std::shared_ptr<nn::Sequential> trunk;
  std::shared_ptr<nn::Linear> head_a, head_b, text_decoder;
};

struct ScenarioBatch {
  Tensor x;    // (B, 4)
  Tensor ya;   // (B, 1)
  Tensor yb;   // (B,) int64 in [0, 3)
  Tensor yt;   // (B, 5)
};

// The k-th micro-batch of `rank`: a deterministic function of (seed, rank, k). With same_data every
// rank draws the same batches.
ScenarioBatch scenario_batch(uint64_t seed, int rank, int64_t k, bool same_data);

// One term of a loss over a forward's outputs and its batch (the plan language's backward(...) terms):
//   "a"      MSE of head_a against ya
//   "b"      cross-entropy of head_b against yb
//   "t"      MSE of the text decoder against yt; std::invalid_argument when the forward did not return t
//   "dummy"  0 * (sum of every parameter's sum): touches each parameter once, contributes nothing
//   "t_outside"  MSE of text_decoder(h) against yt, the decoder applied outside DDP's forward to the features
//            h that forward returned (forward(features)); std::invalid_argument without them
// `how` is the forward that produced `outputs` (it says where t and h are).
Tensor scenario_loss(const ScenarioModel& model, const std::string& term, const std::vector<Tensor>& outputs,
                     const ScenarioBatch& batch, const ScenarioForward& how = {});

}  // namespace tinyddp::models
